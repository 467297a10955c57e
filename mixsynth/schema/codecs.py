"""Value codecs: input columns <-> model values (float64 arrays, NaN for missing), by
the ColumnSpec of each column; and the table as the model sees it (`model_view`).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..dates import from_days, to_days
from ..numbers import parse_numbers
from ..tableio import InputError
from .inference import is_numeric
from .spec import LEVEL_KINDS, OTHER, ColumnSpec, TableSpec


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
        present = s.notna().to_numpy().copy()
        if col.kind in LEVEL_KINDS:
            idx = pd.Index(col.levels, dtype=object).get_indexer(s[present].to_numpy(dtype=object))
            if col.merged and OTHER in col.levels:
                idx[idx < 0] = col.levels.index(OTHER)
            elif col.merged:   # a number column's rare values are suppressed
                present[present] = idx >= 0
                idx = idx[idx >= 0]
            if (idx < 0).any():
                raise InputError(f"column '{col.name}' has {int((idx < 0).sum())} values that are not "
                                 f"among its {len(col.levels)} levels; rebuild the spec from this table")
            codes = np.full(len(s), np.nan)
            codes[present] = idx
        else:
            codes = column_numbers(s, col)
        out[col.name] = codes
    return out


def column_numbers(s: pd.Series, col: ColumnSpec) -> np.ndarray:
    """(n,) float64 model values of a count/continuous/date column: numbers as they are,
    text numbers under `col.decimal`, dates as days since 1970; NaN for missing."""
    if col.kind == "date":
        return to_days(s, col.date_format)
    if col.decimal and not is_numeric(s):
        return parse_numbers(s, col.decimal)
    if not is_numeric(s):
        raise InputError(f"column '{col.name}' is {col.kind} in the spec but not numeric in the "
                         f"table; rebuild the spec from this table")
    return s.to_numpy(dtype=np.float64, na_value=np.nan)


def model_view(frame: pd.DataFrame, spec: TableSpec) -> pd.DataFrame:
    """`frame` as the model sees it (what the report compares): text numbers and dates as
    numbers (days), rare levels as `other`; other columns unchanged."""
    out = frame.copy()
    for col in spec.columns:
        if col.name not in frame.columns:
            continue
        if col.kind == "date" or col.decimal:
            out[col.name] = column_numbers(frame[col.name], col)
        elif col.merged and OTHER not in col.levels:   # numbers: rare values suppressed
            s = frame[col.name]
            out[col.name] = s.where(s.isin(col.levels))
        elif col.merged:
            keys = {_level_key(v): v for v in col.levels}
            s = frame[col.name].astype(object)
            out[col.name] = s.map(lambda v: v if pd.isna(v) else keys.get(_level_key(v), OTHER)).astype(object)
    return out


def _level_key(v):
    """A level's identity across files: numbers and number text (2, 2.0, "2.0") as one float,
    other text as itself. A numeric coded column with `other` is read back as text, so the
    synthetic "2.0" must meet the real 2.0."""
    if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
        return float(v)
    try:
        return float(v)
    except (TypeError, ValueError):
        return v


def from_codes(values: dict[str, np.ndarray], spec: TableSpec) -> pd.DataFrame:
    """Inverse of `to_codes`: arrays of length n (NaN = missing) -> (n, n_columns) frame in
    output order (constant columns written back as they are).

    Restores the recorded dtype where possible: integer and bool columns with missing
    values become pandas nullable Int64/boolean; a `category` column gets its levels as
    categories (ordered for an ordinal column); count values are rounded; dates are
    written in their input format.
    """
    columns = {col.name: _restore(col, np.asarray(values[col.name], dtype=np.float64))
               for col in spec.columns}
    n = len(next(iter(columns.values())))
    for const in spec.constants:
        columns[const["name"]] = _constant(const, n)
    return pd.DataFrame({name: columns[name] for name in spec.output_names})


def _constant(const: dict, n: int) -> pd.Series:
    """A constant column of n rows in its recorded dtype."""
    try:
        return pd.Series([const["value"]] * n, dtype=const["dtype"] or None)
    except (TypeError, ValueError):
        return pd.Series([const["value"]] * n)


def _restore(col: ColumnSpec, x: np.ndarray) -> pd.Series:
    """One output column from its model values `x` (n,), in the recorded dtype where possible."""
    if col.kind == "date":
        return from_days(x, col.date_format, col.dtype)
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
