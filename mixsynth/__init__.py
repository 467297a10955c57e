"""mixsynth: fully synthetic mixed microdata from an extended rank-probit Gaussian copula.

The statistical core (no Dagster here): `schema` and `tableio` read and describe the
table, `marginals` hold each column's distribution, `latent`, `truncnorm` and `sampler`
fit the sparse factor copula by Gibbs sampling, `synthesis` and `model` draw synthetic
tables, `cli` is the command line.
"""
from .model import CopulaSynthesizer
from .config import BartSettings, Prior, RunConfig, SamplerSettings, SynthesisSettings
from .schema import ColumnSpec, TableSpec, infer_spec, load_spec
from .tableio import InputError, read_table, write_table

__all__ = ["CopulaSynthesizer", "RunConfig", "SamplerSettings", "BartSettings", "SynthesisSettings", "Prior",
           "TableSpec", "ColumnSpec",
           "infer_spec", "load_spec", "InputError", "read_table", "write_table"]
