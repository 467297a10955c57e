"""mixsynth: fully synthetic mixed microdata from an extended rank-probit Gaussian copula.

The statistical core (no Dagster here): `config` holds a run's settings, `schema` and
`tableio` read and describe the table, `layout` and `marginals` fix its latent columns and
each column's distribution, `sampler` (over the numba leaves in `kernels`) fits the sparse
factor copula by Gibbs sampling, `responses` the BART response models, `model` and
`synthetic` draw synthetic tables, `report` judges them and `cli` is the command line.
ARCHITECTURE.md maps every stage to its module.
"""
from .model import CopulaSynthesizer
from .config import BartSettings, Prior, RunConfig, SamplerSettings, SynthesisSettings
from .schema import ColumnSpec, TableSpec, infer_spec, load_spec
from .tableio import InputError, read_table, write_table

__all__ = ["CopulaSynthesizer", "RunConfig", "SamplerSettings", "BartSettings", "SynthesisSettings", "Prior",
           "TableSpec", "ColumnSpec",
           "infer_spec", "load_spec", "InputError", "read_table", "write_table"]
