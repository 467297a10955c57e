"""Numbers exported as text: thousands separators, decimal commas, a few words among numbers.

A column convention `decimal` is "." (1,234.5: commas group thousands) or "," (1.234,5 or
3,14: the comma is the decimal mark). `parse_numbers` turns (n,) text into (n,) floats under
one convention, NaN where a cell is missing or not a number; `detect_numbers` picks the
convention of a text column. Messages name the column and counts, never a cell.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from .tableio import InputError

DECIMALS = (".", ",")
_DOT = re.compile(r"[+-]?(?:\d{1,3}(?:,\d{3})+(?:\.\d*)?|\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_COMMA = re.compile(r"[+-]?(?:\d{1,3}(?:\.\d{3})+(?:,\d*)?|\d+(?:,\d*)?|,\d+)(?:[eE][+-]?\d+)?")
FORMATS = {".": "thousands separators (1,234.5)", ",": "decimal commas (1.234,5)"}


def parse_numbers(s: pd.Series, decimal: str) -> np.ndarray:
    """(n,) float64 of text cells read under `decimal` ("." or ","); NaN for missing or non-numbers."""
    text = s.astype("string").str.strip()
    pattern, group, mark = (_DOT, ",", ".") if decimal == "." else (_COMMA, ".", ",")
    ok = text.str.fullmatch(pattern).fillna(False).astype(bool)
    clean = text.where(ok).str.replace(group, "", regex=False).str.replace(mark, ".", regex=False)
    return pd.to_numeric(clean, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)


def detect_numbers(s: pd.Series, decl_decimal: str | None = None) -> tuple[str, np.ndarray, int] | None:
    """(decimal, (n,) values, cells that are not numbers) for a text column of numbers, else None.

    None when fewer than half the non-missing cells are numbers. The convention is the one
    under which more cells read as numbers; a tie where some cell reads differently under
    the two (3,146) is refused naming the column, unless `decl_decimal` fixes it.
    """
    present = s.notna().to_numpy()
    n = int(present.sum())
    if n == 0:
        return None
    read = {d: parse_numbers(s, d) for d in ([decl_decimal] if decl_decimal else DECIMALS)}
    counts = {d: int((~np.isnan(x) & present).sum()) for d, x in read.items()}
    best = max(counts, key=counts.get)
    if counts[best] * 2 < n:
        return None
    if len(read) == 2 and counts["."] == counts[","]:
        a, b = read["."], read[","]
        both = ~np.isnan(a) & ~np.isnan(b)
        if (a[both] != b[both]).any():
            raise InputError(f"column '{s.name}' writes numbers with a comma that may group thousands or "
                             f"mark decimals; declare its `decimal:` (\".\" or \",\") in the spec")
        best = "."
    return best, read[best], n - counts[best]
