"""The rows the dependence is fitted on when a file is large (``sampler.rows``).

The copula's C needs far fewer rows than a census holds once n is many times p*^2, and a
sweep costs time in proportion to n; the marginals, the categorical joint and the synthetic
file's size still come from every row (model.py). ``copula_rows`` draws the kept rows: a
simple random sample, topped up so that every row group (each level of a categorical that
has a latent column, each side of a binary or blank indicator, the blank rows of each column)
keeps at least ``MIN_GROUP_ROWS`` rows, or all of them when it has fewer.
"""
import numpy as np

from .constraints import Constraints
from .kernels.latent import LEVEL

MIN_GROUP_ROWS = 50  # rows each level, binary side and blank set keeps in the subsample (or all it has)


def row_groups(cons: Constraints) -> list[np.ndarray]:
    """The row groups (each an int64 array of rows) a subsample must keep rows of."""
    a = cons.arrays
    groups = []
    for j in range(cons.kind.size):
        blank = a.missing[a.missing_ptr[j]:a.missing_ptr[j + 1]]
        if blank.size:
            groups.append(blank)
        if a.kind[j] == LEVEL:
            groups.append(np.flatnonzero(a.codes[a.code_row[j]] == a.code_level[j]))
    for _, lower, upper in cons.two_groups:
        groups += [lower, upper]
    return groups


def copula_rows(cons: Constraints, rows: int, seed: int) -> np.ndarray | None:
    """Sorted indices (int64) of the rows the copula is fitted on: ``rows`` drawn at random
    (the same ``seed``, the same rows), plus the fewest more rows that give every row group
    ``min(MIN_GROUP_ROWS, its size)`` rows. None when the file has at most ``rows`` rows."""
    n = cons.n_rows
    if n <= rows:
        return None
    rng = np.random.default_rng(np.random.SeedSequence([seed, 2]))
    keep = np.zeros(n, dtype=bool)
    keep[rng.choice(n, rows, replace=False)] = True
    for group in row_groups(cons):
        short = min(MIN_GROUP_ROWS, group.size) - int(keep[group].sum())
        if short > 0:
            keep[rng.choice(group[~keep[group]], short, replace=False)] = True
    return np.flatnonzero(keep)
