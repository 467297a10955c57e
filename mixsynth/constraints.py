"""The constraints the observed data put on each latent column, built once per chain, and
the latent values drawn under them (method.md 3.7; the kinds of column and what constrains
them: kernels/latent.py).

``build_constraints`` turns the latent columns and their data into the kernels' one
argument (``ConstraintArrays``); ``Constraints`` holds it with what plain Python derives
from it once a chain: the blank patterns (blank_cells.py) and the two-group columns
(binary_rows.py). ``initial_latent`` starts a chain's Z, ``draw_latent`` draws Z given its
means outside the sampler's sweeps (synthesis, a response's latent).
"""
from dataclasses import dataclass
from functools import cached_property

import numba as nb
import numpy as np
from scipy import stats

from .blank_cells import blank_patterns
from .kernels.blank_cells import BlankPatterns
from .kernels.latent import LEVEL, RANK, ConstraintArrays, update_latent
from .latent_columns import LatentColumn

TIE_ROWS = 20  # a boundary between two tie groups of at least this many rows gets the cut move


@dataclass(frozen=True)
class Constraints:
    """The constraints of p latent columns over n rows: ``arrays``, what the kernels take,
    and what is derived from them once."""
    arrays: ConstraintArrays

    @property
    def kind(self) -> np.ndarray:
        """(p,) int8, RANK or LEVEL."""
        return self.arrays.kind

    @property
    def n_rows(self) -> int:
        return self.arrays.codes.shape[1]

    @cached_property
    def blank_patterns(self) -> BlankPatterns:
        """Each set of latent columns blank in exactly the same rows (blank_cells.py)."""
        return blank_patterns(self.arrays.missing, self.arrays.missing_ptr, self.n_rows)

    @cached_property
    def two_groups(self) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """(j, rows of the lower tie group, rows of the upper) of every rank column with two
        tie groups: a binary or a blank indicator (binary_rows.py)."""
        a = self.arrays
        out = []
        for j in np.flatnonzero(a.kind == RANK):
            starts = a.groups[a.group_ptr[j]:a.group_ptr[j + 1]]
            if starts.size == 3:
                rows = a.order[a.order_ptr[j]:a.order_ptr[j + 1]]
                out.append((int(j), rows[:starts[1]], rows[starts[1]:]))
        return out


def build_constraints(columns: list[LatentColumn], rank_values: dict[str, np.ndarray],
                      codes: np.ndarray, code_index: dict[str, int], tie_rows: int = TIE_ROWS) -> Constraints:
    """Constraints for ``columns``.

    rank_values: latent column name -> (n,) float values, NaN where missing (rank columns).
    codes: (n_categorical, n) level codes, -1 missing; code_index: source column -> row.
    tie_rows: boundaries between two tie groups of at least this many rows get the cut move.
    """
    n = codes.shape[1]
    kind = np.array([c.kind for c in columns], dtype=np.int8)
    order, groups, missing, cuts = [], [], [], []
    order_ptr, group_ptr, missing_ptr, cut_ptr = [0], [0], [0], [0]
    code_row = np.full(len(columns), -1, dtype=np.int64)
    code_level = np.full(len(columns), -1, dtype=np.int64)
    for j, col in enumerate(columns):
        if col.kind == LEVEL:
            code_row[j] = code_index[col.source]
            code_level[j] = col.level
            missing.append(np.flatnonzero(codes[code_row[j]] < 0))
        else:
            y = rank_values[col.name]
            observed = np.flatnonzero(~np.isnan(y))
            rows = observed[np.argsort(y[observed], kind="stable")]
            sorted_y = y[rows]
            starts = np.flatnonzero(np.r_[True, sorted_y[1:] != sorted_y[:-1]])
            order.append(rows)
            groups.append(np.r_[starts, rows.size])
            missing.append(np.flatnonzero(np.isnan(y)))
            large = np.diff(groups[-1]) >= tie_rows
            cuts.append(np.flatnonzero(large[:-1] & large[1:]))
        order_ptr.append(order_ptr[-1] + (order[-1].size if col.kind == RANK else 0))
        group_ptr.append(group_ptr[-1] + (groups[-1].size if col.kind == RANK else 0))
        missing_ptr.append(missing_ptr[-1] + missing[-1].size)
        cut_ptr.append(cut_ptr[-1] + (cuts[-1].size if col.kind == RANK else 0))

    def flat(parts):
        return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64)

    return Constraints(ConstraintArrays(
        kind=kind, order=flat(order), order_ptr=np.array(order_ptr, np.int64),
        groups=flat(groups), group_ptr=np.array(group_ptr, np.int64),
        missing=flat(missing), missing_ptr=np.array(missing_ptr, np.int64),
        codes=np.ascontiguousarray(codes, dtype=np.int64).reshape(-1, n),
        code_row=code_row, code_level=code_level, cuts=flat(cuts), cut_ptr=np.array(cut_ptr, np.int64)))


def initial_latent(cons: Constraints) -> np.ndarray:
    """Starting Z, shape (p, n): normal scores of the ranks (ties share their average rank)
    for rank columns, +-0.5 by membership for level columns, 0 where missing."""
    a = cons.arrays
    p, n = a.kind.size, cons.n_rows
    Zt = np.zeros((p, n))
    for j in range(p):
        if a.kind[j] == LEVEL:
            row = a.codes[a.code_row[j]]
            Zt[j] = np.where(row < 0, 0.0, np.where(row == a.code_level[j], 0.5, -0.5))
            continue
        rows = a.order[a.order_ptr[j]:a.order_ptr[j + 1]]
        starts = a.groups[a.group_ptr[j]:a.group_ptr[j + 1]]
        sizes = np.diff(starts)
        mid_rank = starts[:-1] + (sizes + 1) / 2.0
        Zt[j, rows] = np.repeat(stats.norm.ppf(mid_rank / (rows.size + 1)), sizes)
    return Zt


def draw_latent(Zt: np.ndarray, Mt: np.ndarray, sd: np.ndarray, cons: Constraints,
                state: np.ndarray) -> None:
    """Update ``Zt`` (p, n) in place given means ``Mt`` (p, n) and sds ``sd``: (p,) one a
    column, or (p, n) one a cell; state (p, 8) the columns' generator streams; no cut moves."""
    sd = np.asarray(sd, dtype=float)
    sd = np.ascontiguousarray(sd[:, None] if sd.ndim == 1 else sd)
    with nb.parallel_chunksize(1):  # columns differ in cost: hand them out one at a time
        update_latent(Zt, Mt, sd, np.zeros(sd.shape[0], dtype=np.bool_), cons.arrays, state)
