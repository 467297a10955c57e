"""Reading and atomically writing tables (CSV, TSV, Parquet) chosen by file suffix.

Errors never quote cell values: a failure is reported by file name and exception
type only, and the original exception is not chained (its text may hold data).
"""
from __future__ import annotations

import os
import secrets
from pathlib import Path

import pandas as pd

_SUFFIXES = {".csv": "csv", ".csv.gz": "csv", ".tsv": "tsv", ".tsv.gz": "tsv",
             ".parquet": "parquet", ".pq": "parquet"}


class InputError(ValueError):
    """Bad input table or spec; the one-line message names the column or file and the fix."""


def _format(path: Path) -> str:
    """'csv', 'tsv' or 'parquet' from the suffix of `path`, else InputError."""
    name = path.name.lower()
    for suffix, fmt in _SUFFIXES.items():
        if name.endswith(suffix):
            return fmt
    raise InputError(f"cannot tell the format of '{path}'; use one of the suffixes "
                     f"{', '.join(_SUFFIXES)}")


def read_table(path) -> pd.DataFrame:
    """Read a CSV/TSV (optionally gzipped) or Parquet file into an (n_rows, n_cols) frame.

    Empty strings and "NA" read as missing; text columns keep pandas' string dtype.
    """
    path = Path(path)
    fmt = _format(path)
    if not path.is_file():
        raise InputError(f"table file '{path}' does not exist; check the path")
    try:
        if fmt == "parquet":
            frame = pd.read_parquet(path)
        else:
            frame = pd.read_csv(path, sep="\t" if fmt == "tsv" else ",")
    except pd.errors.EmptyDataError:
        frame = pd.DataFrame()
    except Exception as exc:  # parser messages can quote cells, so report the type only
        raise InputError(f"cannot read table '{path}' ({type(exc).__name__}); "
                         f"check that it is a valid {fmt} file") from None
    if frame.shape[0] == 0 or frame.shape[1] == 0:
        raise InputError(f"table '{path}' is empty ({frame.shape[0]} rows, "
                         f"{frame.shape[1]} columns); supply a file with a header and data rows")
    return frame


def write_table(frame: pd.DataFrame, path) -> None:
    """Write `frame` (without its index) to CSV/TSV/Parquet by suffix, atomically.

    The table goes to a temporary file in the target directory and is moved onto
    `path` with os.replace; on failure the temporary file is removed and any
    previous file at `path` is left untouched.
    """
    path = Path(path)
    fmt = _format(path)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        if fmt == "parquet":
            frame.to_parquet(tmp, index=False)
        else:
            frame.to_csv(tmp, sep="\t" if fmt == "tsv" else ",", index=False,
                         compression="gzip" if path.name.lower().endswith(".gz") else None)
        os.replace(tmp, path)
    except Exception as exc:  # writer messages can quote cells, so report the type only
        tmp.unlink(missing_ok=True)
        detail = f": {exc.strerror}" if isinstance(exc, OSError) and exc.strerror else ""
        raise InputError(f"cannot write table '{path}' ({type(exc).__name__}{detail}); "
                         f"check the directory exists and is writable and the columns hold "
                         f"plain numbers or strings") from None
