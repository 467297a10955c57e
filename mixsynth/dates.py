"""ISO dates and date-times as numbers: days since 1970-01-01 (float), and back.

`detect_date_format` finds the one ISO format (strftime) of a text column, `to_days` reads
(n,) cells into (n,) float days (NaN where missing or not a date of that format) and
`from_days` writes days back as text of that format (rounded to its resolution), or as
datetime64 for a column that was one. Messages never quote a cell.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

# the ISO strftime formats recognised without a declaration, and the pattern each matches
FORMATS = {
    "%Y-%m-%d": (r"\d{4}-\d{2}-\d{2}",),
    "%Y-%m-%dT%H:%M:%S": (r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}",),
    "%Y-%m-%d %H:%M:%S": (r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}",),
    "%Y-%m-%dT%H:%M": (r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}",),
    "%Y-%m-%d %H:%M": (r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}",),
}
NATIVE = ""   # the date_format of a column that is already datetime64
_EPOCH = pd.Timestamp("1970-01-01")
_DAY = pd.Timedelta(days=1)


def is_datetime(s: pd.Series) -> bool:
    """True for a datetime64 column (time zones included)."""
    return pd.api.types.is_datetime64_any_dtype(s.dtype)


def detect_date_format(s: pd.Series, share: float = 0.9) -> str | None:
    """The ISO format that at least `share` of the non-missing text cells match, else None."""
    text = s.dropna().astype("string").str.strip()
    if text.empty:
        return None
    for fmt, (pattern,) in FORMATS.items():
        if text.str.fullmatch(pattern).mean() >= share:
            return fmt
    return None


def to_days(s: pd.Series, fmt: str) -> np.ndarray:
    """(n,) float days since 1970-01-01 of `s` read with `fmt` (NATIVE: a datetime64 column)."""
    if fmt == NATIVE:
        when = pd.to_datetime(s, errors="coerce")
        if getattr(when.dt, "tz", None) is not None:
            when = when.dt.tz_convert(None)
    else:
        text = s.astype("string").str.strip()
        if fmt in FORMATS:   # the ISO formats are matched whole (pandas would accept a prefix)
            text = text.where(text.str.fullmatch(FORMATS[fmt][0]).fillna(False).astype(bool))
        when = pd.to_datetime(text, format=fmt, errors="coerce")
    return ((when - _EPOCH) / _DAY).to_numpy(dtype=np.float64, na_value=np.nan)


def from_days(x: np.ndarray, fmt: str, dtype: str = "") -> pd.Series:
    """(n,) days (NaN = missing) -> text in `fmt`, rounded to its resolution; NATIVE -> datetime64."""
    step = resolution_days(fmt) * 86400.0
    seconds = np.round(np.asarray(x, dtype=np.float64) * 86400.0 / step) * step
    when = pd.Series(pd.to_datetime(seconds, unit="s", errors="coerce"))
    if fmt == NATIVE:
        return when.astype(dtype) if dtype.startswith("datetime64") and "[" in dtype and "tz" not in dtype else when
    return when.dt.strftime(fmt).astype(object).where(when.notna(), np.nan)


def resolution_days(fmt: str) -> float:
    """The smallest step of `fmt`, in days: 1 without a time, 1/1440 with minutes, 1/86400
    with seconds (and for datetime64 columns)."""
    if fmt == NATIVE or "%S" in fmt or "%T" in fmt:
        return 1 / 86400.0
    return 1 / 1440.0 if "%M" in fmt else 1 / 24.0 if "%H" in fmt else 1.0
