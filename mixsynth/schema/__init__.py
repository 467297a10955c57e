"""Column specification: what each input column is and how the copula models it.

`spec` holds the types (`ColumnSpec`, `TableSpec`) and the checks of a raw YAML spec,
`inference` the rule that infers what a spec leaves out (`infer_spec`), and `codecs` the
conversion of input columns to model values and back (`to_codes`, `from_codes`).
"""
from .codecs import column_numbers, from_codes, model_view, to_codes
from .inference import NUMBER_SHARE, infer_spec
from .spec import COLUMN_KEYS, INFER_DEFAULTS, KINDS, LEVEL_KINDS, OTHER, ROLES, ColumnSpec, TableSpec, load_spec

__all__ = ["COLUMN_KEYS", "INFER_DEFAULTS", "KINDS", "LEVEL_KINDS", "NUMBER_SHARE", "OTHER", "ROLES", "ColumnSpec",
           "TableSpec", "column_numbers", "from_codes", "infer_spec", "load_spec", "model_view", "to_codes"]
