"""Reading and atomically writing tables (CSV, TSV, Parquet) chosen by file suffix.

Errors never quote cell values: a failure is reported by the file's base name and the
exception type only, and the original exception is not chained (its text may hold data).
A message is one line of at most MAX_MESSAGE characters with one fix.
"""
from __future__ import annotations

import difflib
import gzip
import os
import re
import secrets
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

_SUFFIXES = {".csv": "csv", ".csv.gz": "csv", ".tsv": "tsv", ".tsv.gz": "tsv",
             ".parquet": "parquet", ".pq": "parquet"}


MAX_MESSAGE = 200   # characters of an error message, with its column or file name


class InputError(ValueError):
    """Bad input table or spec; the one-line message names the column or file and the fix."""


def did_you_mean(name: str, choices) -> str:
    """' (did you mean 'X'?)' for the choice closest to `name`, else ''."""
    close = difflib.get_close_matches(str(name), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _format(path: Path) -> str:
    """'csv', 'tsv' or 'parquet' from the suffix of `path`, else InputError."""
    name = path.name.lower()
    for suffix, fmt in _SUFFIXES.items():
        if name.endswith(suffix):
            return fmt
    raise InputError(f"cannot tell the format of '{path.name}'; use one of the suffixes "
                     f"{', '.join(_SUFFIXES)}")


DELIMITERS = {",": "comma", ";": "semicolon", "\t": "tab"}
# the C parser's messages: only their numbers are kept, never their text (it can quote cells)
_FIELDS_ERROR = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")
_QUOTE_ERROR = re.compile(r"EOF inside string starting at row (\d+)")


def read_table(path) -> pd.DataFrame:
    """Read a CSV/TSV (optionally gzipped) or Parquet file into an (n_rows, n_cols) frame.

    The delimiter of a text file is detected from its header line (comma, semicolon or
    tab, whichever occurs most outside quotes); a header with none of them is refused as
    a one-column file. Repeated column names are refused, and a row with more fields than
    the header is named by its line number. Empty strings and "NA" read as missing; text
    columns keep pandas' string dtype.
    """
    path = Path(path)
    fmt = _format(path)
    if not path.is_file():
        raise InputError(f"table file '{path.name}' does not exist; check the path")
    try:
        if fmt == "parquet":
            frame = pd.read_parquet(path)
        else:
            sep = _delimiter(path)
            if sep is None:
                frame = pd.DataFrame()
            else:
                _check_header(path, sep)
                frame = pd.read_csv(path, sep=sep)
    except pd.errors.EmptyDataError:
        frame = pd.DataFrame()
    except pd.errors.ParserError as exc:
        raise InputError(_parser_message(path, str(exc))) from None
    except InputError:
        raise
    except Exception as exc:  # parser messages can quote cells, so report the type only
        raise InputError(f"cannot read table '{path.name}' ({type(exc).__name__}); "
                         f"check that it is a valid {fmt} file") from None
    if frame.shape[0] == 0 or frame.shape[1] == 0:
        raise InputError(f"table '{path.name}' is empty ({frame.shape[0]} rows, "
                         f"{frame.shape[1]} columns); supply a file with a header and data rows")
    return frame


def _delimiter(path: Path) -> str | None:
    """The delimiter of a text table from its first non-blank line (None for an empty file).

    Counts commas, semicolons and tabs outside double quotes; InputError when there are none.
    """
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", newline="") as fh:
        line = next((ln for ln in fh if ln.strip()), None)
    if line is None:
        return None
    counts = dict.fromkeys(DELIMITERS, 0)
    quoted = False
    for ch in line:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in counts:
            counts[ch] += 1
    sep = max(counts, key=counts.get)
    if counts[sep] == 0:
        raise InputError(f"table '{path.name}' has one column: its header has no comma, semicolon or "
                         f"tab; save it with one of these delimiters")
    return sep


def _check_header(path: Path, sep: str) -> None:
    """InputError naming the first column name that the header repeats."""
    header = pd.read_csv(path, sep=sep, header=None, nrows=1, dtype=str, keep_default_na=False)
    names = [str(v) for v in header.iloc[0]] if len(header) else []
    seen = set()
    for name in names:
        if name in seen:
            raise InputError(f"column '{name}' appears {names.count(name)} times in the header of "
                             f"'{path.name}'; rename the copies")
        seen.add(name)


def _parser_message(path: Path, text: str) -> str:
    """The one-line error for a parser failure: its line number and field counts, never its text."""
    fields = _FIELDS_ERROR.search(text)
    if fields:
        want, line, saw = fields.groups()
        return (f"table '{path.name}': line {line} has {saw} fields where the header has {want}; "
                f"quote the delimiter inside a value of that row")
    quote = _QUOTE_ERROR.search(text)
    if quote:
        return (f"table '{path.name}': a quote opened on line {int(quote.group(1)) + 1} is never closed; "
                f"close it")
    return f"cannot read table '{path.name}' (ParserError); check that it is a valid delimited text file"


@contextmanager
def atomic_path(path: Path):
    """A temporary name beside ``path`` to write to: moved onto ``path`` (os.replace) when
    the block ends, removed when it is left by any exception (a stop included), so ``path``
    is never half-written and any previous file there stays as it was."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_table(frame: pd.DataFrame, path) -> None:
    """Write `frame` (without its index) to CSV/TSV/Parquet by suffix, atomically
    (``atomic_path``)."""
    path = Path(path)
    fmt = _format(path)
    try:
        with atomic_path(path) as tmp:
            if fmt == "parquet":
                frame.to_parquet(tmp, index=False)
            else:
                frame.to_csv(tmp, sep="\t" if fmt == "tsv" else ",", index=False,
                             compression="gzip" if path.name.lower().endswith(".gz") else None)
    except Exception as exc:  # writer messages can quote cells, so report the type only
        detail = f": {exc.strerror}" if isinstance(exc, OSError) and exc.strerror else ""
        fix = ("check that its folder exists and is writable" if isinstance(exc, OSError)
               else "keep plain numbers or strings in its columns")
        raise InputError(f"cannot write table '{path.name}' ({type(exc).__name__}{detail}); {fix}") from None
