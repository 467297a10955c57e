"""Checks before the sampler starts, so a table that would run for hours is refused in seconds.

* `check_levels_not_unique`: a categorical with nearly one level per row (an identifier,
  free text) is refused.
* `check_layout`: a table with more latent columns than its rows can support is refused.
* `fit_seconds`: the chains' expected wall time from rows, latent columns and factors, and
  `bart_seconds` the BART stage's from its fits' rows and features, printed before
  sampling; their constants, fitted to measured fits, live here in one place.

Messages name the column or the counts and the fix, never a value.
"""
from __future__ import annotations

from collections import Counter

from .tableio import InputError
from .workers import cores

UNIQUE_SHARE = 0.5        # a categorical with levels above this share of its rows is refused ...
UNIQUE_MIN_LEVELS = 10    # ... once it has more than this many levels
LATENT_PER_ROW = 1.0      # latent columns allowed per row of the table
# Seconds of one sweep of one chain on one core: SWEEP_FIXED + PER_CELL_K * n p* k + PER_CELL * n p*
# (k = p* for the full covariance), fitted to the sweep times of 2-chain fits on 2 cores that
# benchmarks/RESULTS.md ("Figures quoted in the code") lists; the factor structure (k < p*)
# adds PER_FACTOR_CELL * n k^2 (the factors' draw and cross-products), fitted to its one
# measured layout, the whole KDD file's (5,085 rows x 153 latent columns x 92 factors: 64 ms
# a sweep, 40 ms without the term).
SWEEP_FIXED = 1.5e-4
PER_CELL_K = 4.3e-10
PER_CELL = 1.2e-8
PER_FACTOR_CELL = 5.6e-10
START_SECONDS = 3.0       # process start-up and compilation of the chains
# Seconds of one BART fit with the default settings: a + b n + c n u + d n v (n rows, u numeric
# and v one-hot features), fitted by benchmarks/bart_cost.py (results/bart_cost.md) for a probit
# (a binary response, a part of a categorical's) and the rank likelihood (its variance forest too).
BART_PROBIT = (1.77, 7.65e-4, 2.45e-5, 9.68e-6)
BART_RANK = (5.41, 1.67e-3, 5.9e-5, 1.21e-5)
BART_PROCESS_SECONDS = 5.0   # a spawned BART worker's start-up: "a few seconds" (model.py), not timed apart


def check_levels_not_unique(name: str, n_levels: int, n_observed: int, numeric: bool) -> None:
    """InputError when an unordered column has nearly as many levels as non-missing rows."""
    if n_levels > max(UNIQUE_MIN_LEVELS, UNIQUE_SHARE * n_observed):
        fix = ("declare it `kind: count` or `kind: continuous`, or list it under `exclude`" if numeric
               else "list it under `exclude` (an identifier or free text), or merge its levels into fewer groups")
        raise InputError(f"column '{name}' has {n_levels} distinct values among {n_observed} rows, nearly one "
                         f"per row; {fix}")


def check_layout(n_rows: int, columns: list) -> None:
    """InputError when the latent columns (LatentColumn list) outnumber what `n_rows` rows support;
    the fix names the two source columns that take the most latent columns."""
    n_latent = len(columns)
    if n_latent > LATENT_PER_ROW * n_rows:
        width = Counter(c.source for c in columns)
        names = ", ".join(f"'{name}' ({w})" for name, w in width.most_common(2))
        raise InputError(f"the table has {n_latent} latent columns for {n_rows} rows, more than its rows "
                         f"support; list its widest columns under `exclude`: {names}")


def fit_seconds(n_rows: int, n_latent: int, factors: int, sweeps: int, chains: int,
                minutes: float | None = None) -> float:
    """Expected wall seconds of the chains (module constants): one chain per core, so chains
    beyond the cores wait their turn; a chain runs at most ``minutes`` (its time budget)."""
    per_sweep = SWEEP_FIXED + PER_CELL_K * n_rows * n_latent * max(factors, 1) + PER_CELL * n_rows * n_latent
    if factors < n_latent:
        per_sweep += PER_FACTOR_CELL * n_rows * factors ** 2
    rounds = -(-chains // cores())
    chain = sweeps * per_sweep if minutes is None else min(sweeps * per_sweep, 60.0 * minutes)
    return START_SECONDS + rounds * chain


def bart_seconds(fits: list[list[tuple[bool, int, int, int]]], workers: int, parallel: bool) -> float:
    """Expected wall seconds of the BART stage: ``fits`` holds, per response, the (probit,
    rows, numeric features, one-hot features) of its fits (CopulaSynthesizer.response_fits_).
    The responses run one after another, or with ``parallel`` in ``workers`` processes,
    longest first."""
    def one(probit: bool, n: int, u: int, v: int) -> float:
        a, b, c, d = BART_PROBIT if probit else BART_RANK
        return a + b * n + c * n * u + d * n * v
    jobs = sorted((sum(one(*f) for f in parts) for parts in fits), reverse=True)
    if not parallel or workers < 2:
        return float(sum(jobs))
    load = [0.0] * min(workers, len(jobs))
    for seconds in jobs:
        load[load.index(min(load))] += seconds
    return BART_PROCESS_SECONDS + max(load)


def describe_seconds(seconds: float) -> str:
    """'45 s', '12 min' or '2.5 h'."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
