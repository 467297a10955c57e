"""Rank-normalized split R-hat, bulk and tail effective sample sizes of many scalar
quantities at once (Vehtari, Gelman, Simpson, Carpenter and Buerkner 2021).

The definitions are arviz's (``az.rhat``, ``az.ess`` with ``method="bulk"`` and ``"tail"``),
computed for all quantities together: ranks, normal scores and R-hat as array operations,
the autocovariances and Geyer's initial monotone sequence in a compiled loop per quantity
(kernels/ess.py). arviz's per-quantity Python path costs the same whatever the chains'
length, and with the thousands of entries of C a census file has it took a large share of a
fit's time.
"""
import numpy as np
from scipy import special, stats

from .kernels.ess import ess_many

CHUNK = 2_000_000   # draws handled at once: bounds the memory of the rank arrays


def rhat_ess(draws: np.ndarray, tail: bool = True) -> tuple[np.ndarray, ...]:
    """R-hat, bulk ESS and (with ``tail``) tail ESS, each (m,), of ``draws`` (chains, T, m):
    the maximum of the split R-hat of the rank-normalized draws and of their folded
    version, ESS of the split rank-normalized draws, and the smaller ESS of the indicators
    of the 5% and 95% quantiles. Needs T >= 4 and at least one chain; a split of one chain
    gives two sequences."""
    chains, T, m = draws.shape
    per = max(1, CHUNK // (chains * T))
    parts = [_chunk(np.ascontiguousarray(np.moveaxis(draws[:, :, i:i + per], 2, 0)), tail)
             for i in range(0, m, per)]
    return tuple(np.concatenate(p) for p in zip(*parts))


def _chunk(x: np.ndarray, tail: bool) -> tuple[np.ndarray, ...]:
    """rhat_ess of x (m, chains, T)."""
    m, chains, T = x.shape
    half = T // 2
    split = np.concatenate([x[:, :, :half], x[:, :, T - half:]], axis=1)   # (m, 2 chains, half)
    flat = split.reshape(m, -1)
    folded = np.abs(flat - np.median(flat, axis=1, keepdims=True))
    bulk = _z_scale(flat).reshape(split.shape)
    rhat = np.maximum(_rhat(bulk), _rhat(_z_scale(folded).reshape(split.shape)))
    ess = ess_many(bulk)
    if not tail:
        return rhat, ess
    lo, hi = np.quantile(x.reshape(m, -1), [0.05, 0.95], axis=1)
    ess_tail = np.minimum(ess_many((split <= lo[:, None, None]).astype(float)),
                          ess_many((split <= hi[:, None, None]).astype(float)))
    return rhat, ess, ess_tail


def _z_scale(flat: np.ndarray) -> np.ndarray:
    """Normal scores of the average ranks along axis 1: Phi^-1((r - 3/8) / (S + 1/4))."""
    rank = stats.rankdata(flat, method="average", axis=1)
    return special.ndtri((rank - 0.375) / (flat.shape[1] + 0.25))


def _rhat(x: np.ndarray) -> np.ndarray:
    """(m,) basic R-hat of x (m, sequences, n)."""
    n = x.shape[2]
    between = n * np.var(x.mean(axis=2), axis=1, ddof=1)
    within = np.var(x, axis=2, ddof=1).mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sqrt((between / within + n - 1) / n)
