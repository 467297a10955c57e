"""Column specification types and the checks of a raw YAML spec.

`ColumnSpec` and `TableSpec` describe what each input column is and how the copula models
it; `load_spec` reads a spec file, and the functions below it check each of its sections
(inference.py infers what a spec leaves out). Error messages name columns, counts and the
fix, never a cell or level value.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

from ..numbers import DECIMALS
from ..tableio import InputError

KINDS = ("categorical", "binary", "ordinal", "count", "continuous", "date")
ROLES = ("public", "quasi_identifier", "sensitive", "response", "none")
LEVEL_KINDS = ("categorical", "binary", "ordinal")
COLUMN_KEYS = ("kind", "role", "levels", "unordered", "lower", "upper", "decimal", "format")
INFER_DEFAULTS = {"categorical_max_levels": 5, "max_levels": 100,
                  "ordinal_as_categorical_below": 10, "min_rows": 20, "min_level_rows": 5}
OTHER = "other"          # the level rare levels are merged into
SECTIONS = ("exclude", "infer", "columns", "derived")
SETTINGS = ("sampler", "synthesis", "bart", "responses", "release")   # config.RunConfig reads these; others: `extra`


@dataclass(frozen=True)
class ColumnSpec:
    """One modelled column; `levels` holds the K level values in model order (empty for count/continuous).

    `decimal` ("." or ",") marks a text column read as numbers under that convention;
    `date_format` the strftime format of a date column ("" for datetime64); `merged` the
    number of rare levels merged into the level `other` (values outside `levels` map to it).
    The repr leaves out `levels`, which are data values.
    """

    name: str
    kind: str
    role: str = "none"
    levels: tuple = field(default=(), repr=False)
    unordered: bool = False
    lower: float | None = None
    upper: float | None = None
    dtype: str = ""
    decimal: str = ""
    date_format: str = ""
    merged: int = 0

    def __post_init__(self):
        if self.kind not in KINDS:
            raise InputError(f"column '{self.name}': unknown kind {self.kind!r}; use one of {', '.join(KINDS)}")
        if self.role not in ROLES:
            raise InputError(f"column '{self.name}': unknown role {self.role!r}; use one of {', '.join(ROLES)}")
        object.__setattr__(self, "levels", tuple(self.levels))

    @property
    def modelled_as(self) -> str:
        """'categorical' (one latent per level) or 'rank' (one latent, extended rank likelihood)."""
        return "categorical" if self.unordered else "rank"


@dataclass(frozen=True)
class TableSpec:
    """The modelled columns in input order, the excluded names, and the spec's other sections
    (`extra`: `report:`, `survey:` ...; the run's settings are config.RunConfig's).

    `constants` holds the constant columns ({name, value, dtype}; confidential like the
    levels), written back as they are; `order` the output column names in input order
    (empty: the modelled names); `notes` one line per column read or recoded (no values).
    """

    columns: tuple[ColumnSpec, ...]
    excluded: tuple[str, ...] = ()
    extra: dict = field(default_factory=dict)
    constants: tuple[dict, ...] = ()
    order: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    derived: str = "auto"

    def __post_init__(self):
        for key in ("columns", "excluded", "constants", "order", "notes"):
            object.__setattr__(self, key, tuple(getattr(self, key)))

    def column(self, name: str) -> ColumnSpec:
        """The spec of modelled column `name` (KeyError if it is not modelled)."""
        for col in self.columns:
            if col.name == name:
                return col
        raise KeyError(f"no modelled column {name!r}")

    @property
    def names(self) -> list[str]:
        """Modelled column names in input order."""
        return [col.name for col in self.columns]

    @property
    def output_names(self) -> list[str]:
        """The columns of a synthetic file in input order: modelled and constant columns."""
        return list(self.order) or self.names

    @property
    def recoded(self) -> list[str]:
        """Modelled columns whose rare levels were merged into `other` (text) or suppressed
        (numbers)."""
        return [col.name for col in self.columns if col.merged]

    @property
    def blanked(self) -> list[str]:
        """Number columns whose values are too rare to release: written back blank."""
        return [c["name"] for c in self.constants if c["value"] is None]

    def by_role(self, role: str) -> list[ColumnSpec]:
        """Modelled columns with the given role, in input order."""
        if role not in ROLES:
            raise ValueError(f"unknown role {role!r}; use one of {', '.join(ROLES)}")
        return [col for col in self.columns if col.role == role]

    def to_dict(self) -> dict:
        """JSON-serialisable form (lists for tuples); `TableSpec.from_dict` inverts it exactly."""
        d = asdict(self)
        d["columns"] = [{**c, "levels": list(c["levels"])} for c in d["columns"]]
        d["excluded"] = list(d["excluded"])
        for key in ("constants", "order", "notes"):
            d[key] = list(d[key])
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "TableSpec":
        """Rebuild a TableSpec from `to_dict` output."""
        return cls(columns=tuple(ColumnSpec(**c) for c in d["columns"]),
                   excluded=tuple(d.get("excluded", ())), extra=dict(d.get("extra", {})),
                   constants=tuple(dict(c) for c in d.get("constants", ())),
                   order=tuple(d.get("order", ())), notes=tuple(d.get("notes", ())),
                   derived=d.get("derived", "auto"))


def load_spec(path) -> dict:
    """Read a YAML spec file into its raw mapping (an empty file gives {})."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read spec file '{path.name}' ({exc.strerror or type(exc).__name__}); "
                         f"check the path") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" near line {mark.line + 1}" if mark is not None else ""
        raise InputError(f"spec file '{path.name}' is not valid YAML{where}; fix its syntax") from None
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise InputError(f"spec file '{path.name}' must be a YAML mapping with sections such as "
                         f"`columns:` and `exclude:`")
    return raw


# -- raw spec validation -----------------------------------------------------

def infer_options(infer) -> dict:
    """The `infer:` section merged over INFER_DEFAULTS."""
    if infer is None:
        return dict(INFER_DEFAULTS)
    if not isinstance(infer, dict):
        raise InputError("the `infer` section must be a mapping such as {max_levels: 100}")
    for key, value in infer.items():
        if key not in INFER_DEFAULTS:
            raise InputError(f"unknown key '{key}' under `infer`; allowed keys are {', '.join(INFER_DEFAULTS)}")
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise InputError(f"`infer.{key}` must be a non-negative integer; fix it in the spec")
    return {**INFER_DEFAULTS, **infer}


def column_decls(columns) -> dict[str, dict]:
    """The `columns:` section as {name: settings}, each setting checked for key, type and value."""
    if columns is None:
        return {}
    if not isinstance(columns, dict):
        raise InputError("the `columns` section must map column names to settings such as {kind: count}")
    decls = {}
    for name, decl in columns.items():
        name, decl = str(name), {} if decl is None else decl
        if not isinstance(decl, dict):
            raise InputError(f"column '{name}': settings must be a mapping such as {{kind: count}}")
        for key, value in decl.items():
            if key not in COLUMN_KEYS:
                raise InputError(f"column '{name}': unknown key '{key}'; allowed keys are {', '.join(COLUMN_KEYS)}")
            if key == "kind" and value not in KINDS:
                raise InputError(f"column '{name}': unknown kind {value!r}; use one of {', '.join(KINDS)}")
            if key == "role" and value not in ROLES:
                raise InputError(f"column '{name}': unknown role {value!r}; use one of {', '.join(ROLES)}")
            if key == "unordered" and not isinstance(value, bool):
                raise InputError(f"column '{name}': `unordered` must be true or false")
            if key in ("lower", "upper") and value is not None and not _is_number(value):
                raise InputError(f"column '{name}': `{key}` must be a finite number or null")
            if key == "decimal" and value not in DECIMALS:
                raise InputError(f"column '{name}': `decimal` must be \".\" or \",\"")
            if key == "format" and not (isinstance(value, str) and "%" in value):
                raise InputError(f"column '{name}': `format` must be a strftime format such as \"%d/%m/%Y\"")
            if key == "levels" and not (isinstance(value, list) and value and all(
                    isinstance(v, str) or _is_number(v) or isinstance(v, bool) for v in value)):
                raise InputError(f"column '{name}': `levels` must be a non-empty list of plain values")
        decls[name] = decl
    return decls


def excluded_names(exclude) -> list[str]:
    """The `exclude:` section as a list of column names."""
    if exclude is None:
        return []
    if not isinstance(exclude, list):
        raise InputError("the `exclude` section must be a list of column names, e.g. [ID, rownames]")
    return [str(name) for name in exclude]


def derived_setting(value) -> str:
    """The spec's ``derived:`` setting: "auto" (columns that are a function of another are
    looked up from it, derived.py) or "none"."""
    if value not in ("auto", "none"):
        raise InputError("`derived` must be auto (columns that are a function of another are derived "
                         "from it) or none; fix it in the spec")
    return value


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
