"""Type inference: the ColumnSpec of every input column, from the data and the spec.

A spec (YAML, see `spec.load_spec`) may set, per column, `kind`, `role`, `levels`,
`unordered`, `lower`, `upper`; everything it leaves out is inferred from the data
by `infer_spec` with this rule:

1. Columns listed under `exclude` are dropped; the rest are modelled, in input order.
2. The table needs at least `infer.min_rows` rows (default 20).
3. A column that is entirely missing, or has a single distinct non-missing value and
   missing cells, is rejected (drop it or list it under `exclude`). A constant column
   (one value in every row) is left out of the model and written back as it is.
4. Kind, when not declared, is the first that applies:
   a datetime64 column, or text whose cells (at least 90%) are ISO dates or date-times
   (YYYY-MM-DD, YYYY-MM-DD HH:MM[:SS], T or space) -> date (days since 1970, the kernel
   marginal, written back in the input's format; `format:` gives another strftime format);
   text whose cells are numbers written with thousands separators or decimal commas
   (`numbers.py`; at least 90% of them, more than `categorical_max_levels` distinct
   numbers) -> read as numbers, the other cells as missing, then as below;
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
   Levels of a categorical or binary column held by fewer than `infer.min_level_rows`
   rows (default 5; 0 turns it off) never reach a synthetic file: text levels are merged
   into one level `other` (into the existing level of that name if there is one); a number
   column stays numbers, its rare values suppressed (read as blank, as local suppression).
   A number column with fewer than two such values is left out of the model: written back
   as its one value when that fills every row, else released blank (so is a count or
   continuous column with fewer than `min_level_rows` values). Declared `levels:` are kept
   as listed.
7. Numeric columns must be finite; count/continuous columns must be numeric, and
   count columns integer-valued.
   Bounds: a spec `lower`/`upper` must hold for every observed value; with no `lower`
   key, lower = 0.0 when every observed value is >= 0 (`lower: null` means unbounded);
   upper is None unless given.
8. `dtype` records str(frame[col].dtype) so `from_codes` can restore it.
9. `TableSpec.notes` says, per column, what was read or recoded (counts, never values).

Error messages name columns, counts and the fix, never a cell or level value.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..dates import NATIVE, detect_date_format, is_datetime, to_days
from ..guards import check_levels_not_unique
from ..numbers import DECIMALS, FORMATS as NUMBER_FORMATS, detect_numbers
from ..tableio import InputError, did_you_mean
from .spec import (LEVEL_KINDS, OTHER, SECTIONS, SETTINGS, ColumnSpec, TableSpec, column_decls, derived_setting,
                   excluded_names, infer_options)

NUMBER_SHARE = 0.9       # share of cells that must be numbers (dates) for text to read as such
_EXCLUDE_FIX = "drop it or list it under `exclude` in the spec"


def infer_spec(frame: pd.DataFrame, raw: dict | None = None) -> TableSpec:
    """Validate `frame` (n_rows, n_cols) against the raw spec and infer the rest (module docstring rule)."""
    raw = {} if raw is None else raw
    if not isinstance(raw, dict):
        raise InputError("the spec must be a mapping with sections such as `columns:` and `exclude:`")
    opts = infer_options(raw.get("infer"))
    decls = column_decls(raw.get("columns"))
    excluded = excluded_names(raw.get("exclude"))
    names = list(frame.columns)
    if not all(isinstance(n, str) for n in names):
        raise InputError("column names must be strings; rename the columns of the input table")
    for name in names:
        if names.count(name) > 1:
            raise InputError(f"column '{name}' appears {names.count(name)} times; rename the copies "
                             f"so every column name is distinct")
    for name in [*excluded, *decls]:
        if name not in names:
            raise InputError(f"the spec names column '{name}', which is not in the input"
                             f"{did_you_mean(name, names)}; fix the name in the spec")
    for name in excluded:
        if name in decls:
            raise InputError(f"column '{name}' is both excluded and configured under `columns`; "
                             f"remove one of the two")
    if len(frame) < opts["min_rows"]:
        raise InputError(f"the table has {len(frame)} rows, fewer than the minimum of "
                         f"{opts['min_rows']}; supply more rows")
    notes: list[str] = []
    columns, constants = [], []
    kept = [n for n in names if n not in excluded]
    for name in kept:
        if _is_constant(frame[name]):
            value = frame[name].iloc[0]
            value = value.item() if isinstance(value, np.generic) else value
            constants.append({"name": name, "dtype": str(frame[name].dtype),   # the model file is JSON
                              "value": value if isinstance(value, (str, int, float, bool)) else str(value)})
            notes.append(f"column '{name}' is constant: left out of the model and written back as it is")
        else:
            inferred = _infer_column(frame[name], decls.get(name, {}), opts, notes)
            (constants if isinstance(inferred, dict) else columns).append(inferred)
    if len(columns) < 2:
        held = [f"'{n}'" for n in kept if n not in {c.name for c in columns}]
        raise InputError(f"the table has {len(columns)} varying column(s) to model"
                         f"{' (constant: ' + ', '.join(held) + ')' if held else ''}; the model needs at least "
                         f"two, so add columns or list fewer under `exclude`")
    extra = {k: v for k, v in raw.items() if k not in SECTIONS + SETTINGS}
    return TableSpec(tuple(columns), tuple(excluded), extra, tuple(constants), tuple(kept) if constants else (),
                     tuple(notes), derived_setting(raw.get("derived", "auto")))


def _is_constant(s: pd.Series) -> bool:
    """One value in every row, none missing."""
    return bool(s.notna().all()) and s.nunique() == 1


def _is_text(s: pd.Series) -> bool:
    """Text columns (object or string dtype) that are not already numbers."""
    return (pd.api.types.is_object_dtype(s.dtype) or pd.api.types.is_string_dtype(s.dtype)) \
        and not is_numeric(s)


def _infer_column(s: pd.Series, decl: dict, opts: dict, notes: list[str] | None = None) -> ColumnSpec:
    """The ColumnSpec of one input column given its spec settings `decl`; what was read
    or recoded is appended to `notes` (counts only)."""
    notes = [] if notes is None else notes
    name = s.name
    declared = decl.get("kind")
    observed = s.dropna()
    n_distinct = observed.nunique()
    if n_distinct == 0:
        raise InputError(f"column '{name}' is entirely missing; {_EXCLUDE_FIX}")
    if n_distinct == 1:
        raise InputError(f"column '{name}' has a single distinct value and {int(s.isna().sum())} missing "
                         f"cells; {_EXCLUDE_FIX}")
    if declared == "date" or (declared is None and "decimal" not in decl and (
            is_datetime(s) or (_is_text(s) and detect_date_format(s, NUMBER_SHARE)))):
        return _date_column(s, decl, notes)
    if "format" in decl:
        raise InputError(f"column '{name}': `format` applies only to date columns; remove it or "
                         f"declare `kind: date`")
    decimal = ""
    if _is_text(s) and (declared in (None, "count", "continuous") or "decimal" in decl):
        found = _text_numbers(s, decl, opts, notes)
        if found is not None:
            decimal, numbers = found
            s = pd.Series(numbers, name=name, dtype="Int64" if np.all(np.mod(numbers[~np.isnan(numbers)], 1) == 0)
                          else "float64")
            observed = s.dropna()
            n_distinct = observed.nunique()
    numeric = is_numeric(s)
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
        if unordered and declared is None:   # a declared categorical is the user's choice
            check_levels_not_unique(name, len(levels), len(observed), numeric)
        merged, least = 0, opts["min_level_rows"]
        if kind in ("categorical", "binary") and "levels" not in decl and numeric:   # numbers
            kept = _common_levels(observed, levels, least)
            if len(kept) < 2:
                return _unreleasable(s, kept, least, notes)
            if declared is None and len(kept) == 2:   # two values left: a binary (one latent)
                kind, unordered = "binary", False
            merged = len(levels) - len(kept)
            if merged:
                cells = int((~observed.isin(kept)).sum())
                notes.append(f"column '{name}': {merged} value(s) held by fewer than {least} rows "
                             f"suppressed ({cells} cell(s) read as blank)")
            levels = kept
        elif kind in ("categorical", "binary") and "levels" not in decl:   # text
            levels, merged = _merge_rare(observed, levels, least)
            if merged:
                notes.append(f"column '{name}': {merged} level(s) held by fewer than {least} "
                             f"rows merged into '{OTHER}'")
        return ColumnSpec(name, kind, role, tuple(levels), unordered, dtype=str(s.dtype), merged=merged)
    for key in ("levels", "unordered"):
        if key in decl:
            raise InputError(f"column '{name}' is {kind}; `{key}` applies only to categorical, binary "
                             f"or ordinal columns, remove it")
    if not numeric:
        raise InputError(f"column '{name}' is declared {kind} but is not numeric; declare it "
                         f"categorical, or ordinal with `levels:`")
    x = observed.to_numpy(dtype=np.float64)
    if x.size < opts["min_level_rows"]:
        return _unreleasable(s, [], opts["min_level_rows"], notes)
    if kind == "count" and (np.mod(x, 1) != 0).any():
        raise InputError(f"column '{name}' is declared count but has {int((np.mod(x, 1) != 0).sum())} "
                         f"non-integer values; declare it continuous")
    lower, upper = _bounds(name, x, decl)
    return ColumnSpec(name, kind, role, (), False, lower, upper, str(s.dtype), decimal=decimal)


def _text_numbers(s: pd.Series, decl: dict, opts: dict, notes: list[str]) -> tuple[str, np.ndarray] | None:
    """(decimal, (n,) numbers) when text column `s` is to be read as numbers, else None.

    Undeclared: at least NUMBER_SHARE of its cells must be numbers and more than
    `categorical_max_levels` distinct; declared count/continuous or `decimal`: at least half.
    """
    name = s.name
    if "decimal" in decl and decl["decimal"] not in DECIMALS:
        raise InputError(f"column '{name}': `decimal` must be \".\" or \",\"; fix it in the spec")
    found = detect_numbers(s, decl.get("decimal"))
    if found is None:
        return None
    decimal, numbers, words = found
    n_present = int(s.notna().sum())
    declared = decl.get("kind") in ("count", "continuous") or "decimal" in decl
    if not declared and (words > (1 - NUMBER_SHARE) * n_present
                         or np.unique(numbers[~np.isnan(numbers)]).size <= opts["categorical_max_levels"]):
        return None
    separators = s.astype("string").str.contains(",", regex=False).fillna(False).any()
    if separators:
        notes.append(f"column '{name}': numbers written with {NUMBER_FORMATS[decimal]} read as numbers")
    if words:
        notes.append(f"column '{name}': {words} cell(s) that are not numbers read as missing")
    return decimal, numbers


def _date_column(s: pd.Series, decl: dict, notes: list[str]) -> ColumnSpec:
    """The ColumnSpec of a date column (datetime64, or text of one date format)."""
    name = s.name
    for key in ("levels", "unordered", "lower", "upper", "decimal"):
        if key in decl:
            raise InputError(f"column '{name}' is a date; `{key}` does not apply to dates, remove it")
    fmt = NATIVE if is_datetime(s) else decl.get("format") or detect_date_format(s, 0.5)
    if fmt is None:
        raise InputError(f"column '{name}' is declared date but its cells are not ISO dates "
                         f"(YYYY-MM-DD[ HH:MM:SS]); give their strftime format with `format:`")
    days = to_days(s, fmt)
    bad = int((s.notna().to_numpy() & np.isnan(days)).sum())
    if bad * 2 > int(s.notna().sum()):
        raise InputError(f"column '{name}': {bad} of its {int(s.notna().sum())} cells are not dates of its "
                         f"format; give the format with `format:` or declare another kind")
    if bad:
        notes.append(f"column '{name}': {bad} cell(s) that are not dates read as missing")
    if np.unique(days[~np.isnan(days)]).size < 2:
        raise InputError(f"column '{name}' has a single distinct date; {_EXCLUDE_FIX}")
    seen = days[~np.isnan(days)]   # synthetic dates stay within the real range (no future births)
    return ColumnSpec(name, "date", decl.get("role", "none"), (), False, float(seen.min()), float(seen.max()),
                      str(s.dtype), date_format=fmt)


def _merge_rare(observed: pd.Series, levels: list, min_rows: int) -> tuple[list, int]:
    """(levels with those held by fewer than `min_rows` rows merged into OTHER, how many merged).

    Nothing is merged when no level is rare; OTHER joins an existing level of that name,
    else it is appended as the last level.
    """
    counts = observed.astype(object).value_counts()
    rare = [v for v in levels if counts.get(v, 0) < min_rows and v != OTHER]
    if not rare:
        return levels, 0
    kept = [v for v in levels if v not in set(rare)]
    return (kept if OTHER in kept else [*kept, OTHER]), len(rare)


def _common_levels(observed: pd.Series, levels: list, min_rows: int) -> list:
    """The levels of a number column held by at least `min_rows` rows. The others are
    suppressed (read as blank by `to_codes`), so the column keeps numbers, never OTHER."""
    counts = observed.astype(object).value_counts()
    return [v for v in levels if counts.get(v, 0) >= min_rows]


def _unreleasable(s: pd.Series, kept: list, min_rows: int, notes: list[str]) -> dict:
    """The constant entry ({name, value, dtype}) of a number column too rare to release:
    the one value held by `min_rows` rows when it fills every row, else blank (value None)."""
    name = s.name
    if len(kept) == 1 and s.notna().all():
        notes.append(f"column '{name}': only one value is held by {min_rows} or more rows; "
                     f"written back as that constant")
        value = kept[0].item() if isinstance(kept[0], np.generic) else kept[0]
        return {"name": name, "dtype": str(s.dtype), "value": value}
    notes.append(f"column '{name}': too few of its {int(s.notna().sum())} values are held by {min_rows} "
                 f"or more rows to release any; released blank")
    return {"name": name, "dtype": "float64", "value": None}


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


def is_numeric(s: pd.Series) -> bool:
    """True for int/float columns (bool excluded) and object columns holding only numbers."""
    if pd.api.types.is_bool_dtype(s.dtype):
        return False
    if pd.api.types.is_numeric_dtype(s.dtype):
        return True
    return s.dtype == object and pd.api.types.infer_dtype(s, skipna=True) in (
        "integer", "floating", "mixed-integer-float")
