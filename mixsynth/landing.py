"""The landing folder: which files are complete waves, their names and content digests.

Rule: a landing file becomes a wave once it is complete, which is when its size and
modification time have not changed for ``settle_seconds`` (writers that copy slowly keep
touching the file; writers that write a temporary name and rename are complete at once).
Hidden files (``.name``) and names ending ``.part``, ``.tmp``, ``.partial`` or ``.crdownload``
are in progress and never taken. The wave's name is the file's name without its table
suffix (``2024-q1.csv`` -> ``2024-q1``) and may hold letters, digits, ``.``, ``_`` and ``-``.
The run key of a wave file is its survey, wave and content digest, so the same file seen
twice starts one run and a corrected file under the same name starts another.
"""
from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass
from pathlib import Path

from .tableio import InputError

IN_PROGRESS = (".part", ".tmp", ".partial", ".crdownload")
TABLE_SUFFIXES = (".csv.gz", ".tsv.gz", ".csv", ".tsv", ".parquet", ".pq")
_WAVE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class LandedFile:
    """A complete landing file: its path, wave name and ``sha256:`` content digest."""

    path: Path
    wave: str
    digest: str


def wave_name(path) -> str:
    """The wave a landing file holds: its name without the table suffix."""
    name = Path(path).name
    for suffix in TABLE_SUFFIXES:
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return Path(name).stem


def file_digest(path) -> str:
    """``sha256:<hex>`` of the file's bytes (a fingerprint; says nothing about the content)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return f"sha256:{h.hexdigest()}"


def run_key(survey: str, wave: str, digest: str) -> str:
    """The run key of a wave file: one run per survey, wave and content."""
    return f"{survey}/{wave}/{digest.removeprefix('sha256:')[:32]}"


def scan(folder, pattern: str = "*", settle_seconds: float = 60,
         now: float | None = None) -> tuple[list[LandedFile], list[tuple[str, str]]]:
    """The complete wave files in ``folder`` matching ``pattern`` (sorted by name), and the
    files passed over as (file name, reason). A missing folder holds nothing."""
    folder = Path(folder)
    now = time.time() if now is None else now
    ready, skipped = [], []
    if not folder.is_dir():
        return ready, skipped
    for path in sorted(folder.glob(pattern)):
        name = path.name
        if not path.is_file() or name.startswith(".") or name.lower().endswith(IN_PROGRESS):
            continue
        wave = wave_name(path)
        try:
            stat = path.stat()
            if now - stat.st_mtime < settle_seconds:
                skipped.append((name, f"still being written (changed less than {settle_seconds:g} s ago)"))
                continue
            if not _WAVE.match(wave):
                skipped.append((name, "the wave name may hold only letters, digits, '.', '_' and '-': rename the file"))
                continue
            digest = file_digest(path)
            if path.stat().st_size != stat.st_size:
                skipped.append((name, "still being written (its size changed while hashing)"))
                continue
        except OSError as exc:
            skipped.append((name, f"cannot read it ({exc.strerror or type(exc).__name__}); check its permissions"))
            continue
        ready.append(LandedFile(path, wave, digest))
    return ready, skipped


def wave_file(folder, wave: str, pattern: str = "*") -> Path:
    """The one landing file of ``wave`` in ``folder`` (InputError when there is none or several)."""
    folder = Path(folder)
    found = [p for p in sorted(folder.glob(pattern)) if p.is_file() and not p.name.startswith(".")
             and not p.name.lower().endswith(IN_PROGRESS) and wave_name(p) == wave]
    if not found:
        raise InputError(f"no landing file for wave '{wave}' in '{folder.name}'; put the wave's table "
                         f"there as {wave}.csv (or .parquet)")
    if len(found) > 1:
        raise InputError(f"wave '{wave}' has {len(found)} landing files in '{folder.name}'; keep one")
    return found[0]
