"""Column specification: what each input column is and how the copula models it.

A spec (YAML, see `load_spec`) may set, per column, `kind`, `role`, `levels`,
`unordered`, `lower`, `upper`; everything it leaves out is inferred from the data
by `infer_spec` with this rule:

1. Columns listed under `exclude` are dropped; the rest are modelled, in input order.
2. The table needs at least `infer.min_rows` rows (default 20).
3. A column that is entirely missing, or has a single distinct non-missing value,
   is rejected (drop it or list it under `exclude`).
4. Kind, when not declared, is the first that applies:
   a pandas `category` with `ordered=True` -> ordinal (its category order);
   exactly 2 distinct non-missing values -> binary;
   non-numeric (text, bool, category, other objects) -> categorical;
   numeric with <= `infer.categorical_max_levels` (default 5) distinct values -> categorical;
   numeric and every value integer-valued (40.0 counts) -> count;
   otherwise -> continuous.
5. Levels (categorical/binary/ordinal) are the distinct non-missing values as plain
   Python scalars: in category order for a pandas `category`, else sorted (numbers
   numerically, text lexicographically). A spec `levels:` list fixes the order instead;
   it must cover every observed value, and listed values never observed are dropped.
   An ordinal column of text needs either a `category` dtype or a `levels:` list.
6. `unordered` (model the column as an unordered categorical, one latent per level):
   always for categorical, never for binary/count/continuous; for ordinal, the
   column's `unordered:` setting, else True when it has fewer than
   `infer.ordinal_as_categorical_below` (default 10) levels.
   An unordered column may have at most `infer.max_levels` (default 100) levels.
7. Numeric columns must be finite; count/continuous columns must be numeric, and
   count columns integer-valued.
   Bounds: a spec `lower`/`upper` must hold for every observed value; with no `lower`
   key, lower = 0.0 when every observed value is >= 0 (`lower: null` means unbounded);
   upper is None unless given.
8. `dtype` records str(frame[col].dtype) so `from_codes` can restore it.

Error messages name columns, counts and the fix, never a cell or level value.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from .tableio import InputError

KINDS = ("categorical", "binary", "ordinal", "count", "continuous")
ROLES = ("public", "quasi_identifier", "sensitive", "response", "none")
LEVEL_KINDS = ("categorical", "binary", "ordinal")
COLUMN_KEYS = ("kind", "role", "levels", "unordered", "lower", "upper")
INFER_DEFAULTS = {"categorical_max_levels": 5, "max_levels": 100,
                  "ordinal_as_categorical_below": 10, "min_rows": 20}
_SECTIONS = ("exclude", "infer", "columns", "sampler", "synthesis", "bart")
_EXCLUDE_FIX = "drop it or list it under `exclude` in the spec"


@dataclass(frozen=True)
class ColumnSpec:
    """One modelled column; `levels` holds the K level values in model order (empty for count/continuous).

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
    """The modelled columns in input order, the excluded names, and the pass-through spec sections."""

    columns: tuple[ColumnSpec, ...]
    excluded: tuple[str, ...] = ()
    sampler: dict = field(default_factory=dict)
    synthesis: dict = field(default_factory=dict)
    bart: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "columns", tuple(self.columns))
        object.__setattr__(self, "excluded", tuple(self.excluded))

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
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "TableSpec":
        """Rebuild a TableSpec from `to_dict` output."""
        return cls(columns=tuple(ColumnSpec(**c) for c in d["columns"]),
                   excluded=tuple(d.get("excluded", ())), sampler=dict(d.get("sampler", {})),
                   synthesis=dict(d.get("synthesis", {})), bart=dict(d.get("bart", {})),
                   extra=dict(d.get("extra", {})))


def load_spec(path) -> dict:
    """Read a YAML spec file into its raw mapping (an empty file gives {})."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read spec file '{path}' ({exc.strerror or type(exc).__name__}); "
                         f"check the path") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" near line {mark.line + 1}" if mark is not None else ""
        raise InputError(f"spec file '{path}' is not valid YAML{where}; fix its syntax") from None
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise InputError(f"spec file '{path}' must be a YAML mapping with sections such as "
                         f"`columns:` and `exclude:`")
    return raw


def infer_spec(frame: pd.DataFrame, raw: dict | None = None) -> TableSpec:
    """Validate `frame` (n_rows, n_cols) against the raw spec and infer the rest (module docstring rule)."""
    raw = {} if raw is None else raw
    if not isinstance(raw, dict):
        raise InputError("the spec must be a mapping with sections such as `columns:` and `exclude:`")
    opts = _infer_options(raw.get("infer"))
    decls = _column_decls(raw.get("columns"))
    excluded = _name_list(raw.get("exclude"))
    names = list(frame.columns)
    if not all(isinstance(n, str) for n in names) or len(set(names)) != len(names):
        raise InputError("column names must be distinct strings; rename the columns of the input table")
    for name in [*excluded, *decls]:
        if name not in names:
            raise InputError(f"the spec names column '{name}', which is not in the input; "
                             f"available columns: {', '.join(names)}")
    for name in excluded:
        if name in decls:
            raise InputError(f"column '{name}' is both excluded and configured under `columns`; "
                             f"remove one of the two")
    if len(frame) < opts["min_rows"]:
        raise InputError(f"the table has {len(frame)} rows, fewer than the minimum of "
                         f"{opts['min_rows']}; supply more rows")
    columns = tuple(_infer_column(frame[n], decls.get(n, {}), opts) for n in names if n not in excluded)
    if not columns:
        raise InputError("every column is excluded; leave at least two columns to model")
    extra = {k: v for k, v in raw.items() if k not in _SECTIONS}
    return TableSpec(columns, tuple(excluded), _section(raw, "sampler"), _section(raw, "synthesis"),
                     _section(raw, "bart"), extra)


def to_codes(frame: pd.DataFrame, spec: TableSpec) -> dict[str, np.ndarray]:
    """Model values per modelled column, each a float64 array of length n_rows with NaN for missing.

    categorical/binary/ordinal: level index 0..K-1; count/continuous: the numbers.
    """
    absent = [n for n in spec.names if n not in frame.columns]
    if absent:
        raise InputError(f"the table lacks modelled column(s) {', '.join(absent)}; "
                         f"supply a table with the columns the spec was built from")
    out = {}
    for col in spec.columns:
        s = frame[col.name]
        present = s.notna().to_numpy()
        if col.kind in LEVEL_KINDS:
            idx = pd.Index(col.levels, dtype=object).get_indexer(s[present].to_numpy(dtype=object))
            if (idx < 0).any():
                raise InputError(f"column '{col.name}' has {int((idx < 0).sum())} values that are not "
                                 f"among its {len(col.levels)} levels; rebuild the spec from this table")
            codes = np.full(len(s), np.nan)
            codes[present] = idx
        else:
            if not _is_numeric(s):
                raise InputError(f"column '{col.name}' is {col.kind} in the spec but not numeric in the "
                                 f"table; rebuild the spec from this table")
            codes = s.to_numpy(dtype=np.float64, na_value=np.nan)
        out[col.name] = codes
    return out


def from_codes(values: dict[str, np.ndarray], spec: TableSpec) -> pd.DataFrame:
    """Inverse of `to_codes`: arrays of length n (NaN = missing) -> (n, n_columns) frame in spec order.

    Restores the recorded dtype where possible: integer and bool columns with missing
    values become pandas nullable Int64/boolean; a `category` column gets its levels as
    categories (ordered for an ordinal column); count values are rounded.
    """
    return pd.DataFrame({col.name: _restore(col, np.asarray(values[col.name], dtype=np.float64))
                         for col in spec.columns})


# -- inference ---------------------------------------------------------------

def _infer_column(s: pd.Series, decl: dict, opts: dict) -> ColumnSpec:
    """The ColumnSpec of one input column given its spec settings `decl`."""
    name = s.name
    observed = s.dropna()
    n_distinct = observed.nunique()
    if n_distinct == 0:
        raise InputError(f"column '{name}' is entirely missing; {_EXCLUDE_FIX}")
    if n_distinct == 1:
        raise InputError(f"column '{name}' has a single distinct value; {_EXCLUDE_FIX}")
    numeric = _is_numeric(s)
    n_inf = int((~np.isfinite(observed.to_numpy(dtype=np.float64))).sum()) if numeric else 0
    if n_inf:
        raise InputError(f"column '{name}' has {n_inf} infinite values; replace them with missing "
                         f"values, or list the column under `exclude`")
    kind = decl.get("kind") or _infer_kind(s, observed, numeric, n_distinct, opts)
    role = decl.get("role", "none")
    if kind in LEVEL_KINDS:
        for key in ("lower", "upper"):
            if key in decl:
                raise InputError(f"column '{name}' is {kind}; `{key}` applies only to count or "
                                 f"continuous columns, remove it")
        levels = _levels(s, observed, kind, decl.get("levels"), numeric)
        if kind == "binary" and len(levels) != 2:
            raise InputError(f"column '{name}' is declared binary but has {len(levels)} distinct values; "
                             f"declare it categorical or ordinal")
        unordered = _unordered(name, kind, decl, len(levels), opts)
        if unordered and len(levels) > opts["max_levels"]:
            fix = ("declare it `kind: count` or `kind: continuous` in the spec, or list it under `exclude`"
                   if numeric else "list it under `exclude` or recode it into fewer groups")
            raise InputError(f"column '{name}' has {len(levels)} distinct values, more than the limit of "
                             f"{opts['max_levels']} for a categorical; {fix}")
        return ColumnSpec(name, kind, role, tuple(levels), unordered, dtype=str(s.dtype))
    for key in ("levels", "unordered"):
        if key in decl:
            raise InputError(f"column '{name}' is {kind}; `{key}` applies only to categorical, binary "
                             f"or ordinal columns, remove it")
    if not numeric:
        raise InputError(f"column '{name}' is declared {kind} but is not numeric; declare it "
                         f"categorical, or ordinal with `levels:`")
    x = observed.to_numpy(dtype=np.float64)
    if kind == "count" and (np.mod(x, 1) != 0).any():
        raise InputError(f"column '{name}' is declared count but has {int((np.mod(x, 1) != 0).sum())} "
                         f"non-integer values; declare it continuous")
    lower, upper = _bounds(name, x, decl)
    return ColumnSpec(name, kind, role, (), False, lower, upper, str(s.dtype))


def _infer_kind(s: pd.Series, observed: pd.Series, numeric: bool, n_distinct: int, opts: dict) -> str:
    """Kind of a column the spec leaves undeclared (rule 4)."""
    if isinstance(s.dtype, pd.CategoricalDtype) and s.dtype.ordered:
        return "ordinal"
    if n_distinct == 2:
        return "binary"
    if not numeric or n_distinct <= opts["categorical_max_levels"]:
        return "categorical"
    x = observed.to_numpy(dtype=np.float64)
    return "count" if (np.mod(x, 1) == 0).all() else "continuous"


def _levels(s: pd.Series, observed: pd.Series, kind: str, listed: list | None, numeric: bool) -> list:
    """Level values in model order (rule 5), as plain Python scalars."""
    name = s.name
    is_category = isinstance(s.dtype, pd.CategoricalDtype)
    if is_category:
        present = observed.cat.remove_unused_categories().cat.categories.tolist()
    else:
        present = pd.unique(observed).tolist()
    present = [v.item() if isinstance(v, np.generic) else v for v in present]
    bad = {type(v).__name__ for v in present if not isinstance(v, (str, int, float, bool))}
    if bad:
        raise InputError(f"column '{name}' holds values of type {', '.join(sorted(bad))}, which cannot "
                         f"be modelled; convert it to text or numbers, or list it under `exclude`")
    if listed is None:
        if kind == "ordinal" and not numeric and not is_category:
            raise InputError(f"column '{name}' is declared ordinal but holds text; give the order of "
                             f"its values with `levels:` in the spec")
        return present if is_category else sorted(present, key=lambda v: (isinstance(v, str), v))
    if len(set(listed)) != len(listed):
        raise InputError(f"column '{name}': `levels` lists {len(listed) - len(set(listed))} value(s) "
                         f"more than once; list each once")
    unlisted = len(set(present) - set(listed))
    if unlisted:
        raise InputError(f"column '{name}' has {unlisted} observed value(s) not listed under `levels`; "
                         f"list every value (quote them in YAML if they look like numbers or booleans)")
    as_observed = {v: v for v in present}
    return [as_observed[v] for v in listed if v in as_observed]


def _unordered(name: str, kind: str, decl: dict, n_levels: int, opts: dict) -> bool:
    """Whether a level column is modelled as an unordered categorical (rule 6)."""
    if "unordered" in decl and kind != "ordinal":
        raise InputError(f"column '{name}' is {kind}; `unordered` applies only to ordinal columns, "
                         f"remove it or declare `kind: ordinal`")
    if kind != "ordinal":
        return kind == "categorical"
    return decl.get("unordered", n_levels < opts["ordinal_as_categorical_below"])


def _bounds(name: str, x: np.ndarray, decl: dict) -> tuple[float | None, float | None]:
    """(lower, upper) support bounds of a count/continuous column (rule 7)."""
    lower = decl["lower"] if "lower" in decl else (0.0 if x.min() >= 0 else None)
    upper = decl.get("upper")
    if lower is not None and upper is not None and lower >= upper:
        raise InputError(f"column '{name}': `lower` must be below `upper`; fix the bounds in the spec")
    for side, bound, outside in (("lower", lower, lambda b: x < b), ("upper", upper, lambda b: x > b)):
        if bound is not None and outside(bound).any():
            raise InputError(f"column '{name}' has {int(outside(bound).sum())} values beyond its `{side}` "
                             f"bound; fix the bound in the spec or the data")
    return (None if lower is None else float(lower)), (None if upper is None else float(upper))


def _is_numeric(s: pd.Series) -> bool:
    """True for int/float columns (bool excluded) and object columns holding only numbers."""
    if pd.api.types.is_bool_dtype(s.dtype):
        return False
    if pd.api.types.is_numeric_dtype(s.dtype):
        return True
    return s.dtype == object and pd.api.types.infer_dtype(s, skipna=True) in (
        "integer", "floating", "mixed-integer-float")


# -- raw spec validation -----------------------------------------------------

def _infer_options(infer) -> dict:
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


def _column_decls(columns) -> dict[str, dict]:
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
            if key == "levels" and not (isinstance(value, list) and value and all(
                    isinstance(v, str) or _is_number(v) or isinstance(v, bool) for v in value)):
                raise InputError(f"column '{name}': `levels` must be a non-empty list of plain values")
        decls[name] = decl
    return decls


def _name_list(exclude) -> list[str]:
    """The `exclude:` section as a list of column names."""
    if exclude is None:
        return []
    if not isinstance(exclude, list):
        raise InputError("the `exclude` section must be a list of column names, e.g. [ID, rownames]")
    return [str(name) for name in exclude]


def _section(raw: dict, key: str) -> dict:
    """A pass-through section that must be a mapping (missing/null -> {})."""
    value = raw.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError(f"the `{key}` section must be a mapping; fix it in the spec")
    return dict(value)


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


# -- restoring ---------------------------------------------------------------

def _restore(col: ColumnSpec, x: np.ndarray) -> pd.Series:
    """One output column from its model values `x` (n,), in the recorded dtype where possible."""
    missing = np.isnan(x)
    np_kind = _numpy_kind(col.dtype)
    int_like = np_kind in ("i", "u", "b")
    if col.kind in LEVEL_KINDS:
        valid = (x == np.round(x)) & (x >= 0) & (x < len(col.levels))
        if (~missing & ~valid).any():
            raise ValueError(f"column '{col.name}': codes must be level indices 0..{len(col.levels) - 1} or NaN")
        codes = np.where(missing, -1, x).astype(np.int64)
        if col.dtype == "category":
            return pd.Series(pd.Categorical.from_codes(codes, categories=list(col.levels),
                                                       ordered=col.kind == "ordinal"))
        data = np.array([*col.levels, np.nan], dtype=object)[codes]
    else:
        data = np.rint(x) if col.kind == "count" or int_like else x
    dtype = col.dtype or None
    if int_like and missing.any():
        dtype = {"b": "boolean", "i": "Int", "u": "UInt"}[np_kind]
        dtype += "" if np_kind == "b" else str(np.dtype(col.dtype).itemsize * 8)
    try:
        return pd.Series(data, dtype=dtype)
    except (TypeError, ValueError):
        return pd.Series(data).infer_objects()


def _numpy_kind(dtype: str) -> str:
    """numpy kind character of a dtype string ('' for pandas extension dtypes or unknown)."""
    try:
        t = pd.api.types.pandas_dtype(dtype)
    except TypeError:
        return ""
    return t.kind if isinstance(t, np.dtype) else ""
