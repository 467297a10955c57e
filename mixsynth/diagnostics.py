"""The copula correlation C from posterior draws, and its convergence across chains."""
from dataclasses import dataclass

import numpy as np
from scipy import stats

from .chain_stats import rhat_ess


def copula_correlation(Lambda: np.ndarray, sigma2: np.ndarray) -> np.ndarray:
    """C = D^-1/2 (Lambda Lambda' + Sigma) D^-1/2 for draws Lambda (..., p, k), sigma2 (..., p);
    returns (..., p, p)."""
    omega = Lambda @ np.swapaxes(Lambda, -1, -2)
    idx = np.arange(sigma2.shape[-1])
    omega[..., idx, idx] += sigma2
    d = np.sqrt(omega[..., idx, idx])
    return omega / d[..., :, None] / d[..., None, :]


def identified_pairs(columns: list) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (a < b) of the entries of C that the convergence headline judges.

    Left out, since the data do not identify them and their draws follow the prior:
    correlations between two levels of one categorical (the data fix only which level is
    positive; a categorical's level without a column counts its copy, ``rest_copy``, among
    them) and between a value and the column that blanks it, its missingness indicator or
    a binary spelling its skip pattern (the value is never seen where it is blank).
    """
    level = [c.role in ("level", "dummy") for c in columns]
    iu = np.triu_indices(len(columns), 1)

    def judged(a, b):
        ca, cb = columns[a], columns[b]
        if ca.source == cb.source and level[a] and level[b]:
            return False
        if ca.rest_copy == cb.name or cb.rest_copy == ca.name:
            return False
        for x, y in ((ca, cb), (cb, ca)):
            if y.role != "missing" and y.source in x.blanks:
                return False
        return True

    keep = np.array([judged(a, b) for a, b in zip(*iu)], dtype=bool)
    return iu[0][keep], iu[1][keep]


@dataclass(frozen=True)
class Judged:
    """The quantities of C the convergence headline judges, k-th of m: the correlation of
    latent columns a[k] and b[k], or where seen[k] >= 0 their correlation among the rows
    where the column(s) that latent column seen[k] blanks are observed.

    A column seen only where a binary (or its missingness indicator) takes one value, the
    year of death where death = 1, is fixed by the data only there: its correlation with
    death is not, and its correlations over all rows move with that one (NHEFS: yrdth ~
    death settled at opposite signs in two chains). Among the rows where
    it is seen the correlations are fixed, and they are what synthesis uses (its cells are
    blank elsewhere). Selecting the rows where z_s is on its seen side, a share q of them,
    keeps a fraction v of z_s's variance (a truncated normal's) and, by the Pearson-Lawley
    formula, turns a correlation r_ab into (r_ab - r_as r_bs f) / sqrt((1 - r_as^2 f)
    (1 - r_bs^2 f)) with f = 1 - v (``shrink``). A pair of columns seen through two
    different such columns is taken where the one that blanks more rows says it is seen
    (the day of death ~ blood pressure, blank for 80% and 5% of NHEFS's rows: among the
    deaths; both selections at once would need a bivariate truncated normal's moments).
    A column that holds one value where the other is seen (sex where pregnancies is: women
    only) fixes no such correlation and is left out (``LatentColumn.fixed_where_seen``).
    """
    a: np.ndarray
    b: np.ndarray
    seen: np.ndarray
    shrink: np.ndarray

    @property
    def size(self) -> int:
        return int(self.a.size)

    def values(self, C: np.ndarray) -> np.ndarray:
        """The judged quantities (..., m) from correlation draws C (..., p, p)."""
        out = C[..., self.a, self.b]
        sel = np.flatnonzero(self.seen >= 0)
        if sel.size:
            s, f = self.seen[sel], self.shrink[sel]
            ra, rb = C[..., self.a[sel], s], C[..., self.b[sel], s]
            out[..., sel] = (out[..., sel] - ra * rb * f) / np.sqrt((1 - ra ** 2 * f) * (1 - rb ** 2 * f))
        return out

    def labels(self, names: list[str]) -> list[str]:
        return [f"{names[a]} ~ {names[b]}" + (" (where seen)" if s >= 0 else "")
                for a, b, s in zip(self.a, self.b, self.seen)]


def every_entry(p: int) -> Judged:
    """Every entry of a p x p C, plain."""
    a, b = np.triu_indices(p, 1)
    return Judged(a, b, np.full(a.size, -1), np.zeros(a.size))


def judged_entries(columns: list) -> Judged:
    """The judged quantities of latent ``columns`` (LatentColumn): the ``identified_pairs``,
    those of a column seen on part of the rows taken among those rows (``Judged``)."""
    a, b = identified_pairs(columns)
    seen_by, shrink_of = np.full(len(columns), -1), np.zeros(len(columns))
    for s, col in enumerate(columns):
        q = 1.0 - col.blank_share   # the share of rows where what it blanks is seen
        if col.blanks and 0.0 < q < 1.0:
            c = stats.norm.ppf(1.0 - q)
            lam = stats.norm.pdf(c) / q
            shrink_of[s] = lam * (lam - c)   # 1 - Var(z | z > c), z ~ N(0, 1)
            for j, other in enumerate(columns):
                if other.source in col.blanks and other.role != "missing":
                    seen_by[j] = s
    sa, sb = seen_by[a], seen_by[b]
    wider = np.where(shrink_of[np.maximum(sa, 0)] >= shrink_of[np.maximum(sb, 0)], sa, sb)
    seen = np.where(sa == sb, sa, np.where(sa < 0, sb, np.where(sb < 0, sa, wider)))
    other = np.where(sa == seen, b, a)   # of a pair judged where one column sees it, the one it does not blank
    fixed = np.array([s >= 0 and sa[k] != sb[k] and columns[other[k]].name in columns[s].fixed_where_seen
                      for k, s in enumerate(seen)], dtype=bool)
    keep = ~fixed
    a, b, seen = a[keep], b[keep], seen[keep]
    return Judged(a, b, seen, np.where(seen >= 0, shrink_of[np.maximum(seen, 0)], 0.0))


def convergence(Lambda: np.ndarray, sigma2: np.ndarray, columns: list) -> dict:
    """Rank-normalized split R-hat, bulk and tail effective sample sizes (arviz's definitions,
    computed by chain_stats) of the quantities of C that ``judged_entries`` keeps, from draws
    Lambda (chains, T, p, k) and sigma2 (chains, T, p); ``columns`` are the latent columns
    (LatentColumn).

    Returns a JSON-ready summary: worst and median values and the worst entries' names;
    values are None when undefined (fewer than 4 draws per sequence). With no entry to
    judge (a copula of one column, the rest modelled by BART given it) there is nothing
    to mix: R-hat 1 and every draw effective, said so in ``note``.
    """
    names = [c.name for c in columns]
    judged = judged_entries(columns)
    if not judged.size:
        draws = int(np.prod(sigma2.shape[:2]))
        return {"entries": 0, "chains": int(sigma2.shape[0]), "draws_per_chain": int(sigma2.shape[1]),
                "rhat_max": 1.0, "rhat_median": 1.0, "share_rhat_below_1_01": 1.0,
                "ess_bulk_min": float(draws), "ess_bulk_median": float(draws),
                "ess_tail_min": float(draws), "ess_tail_median": float(draws),
                "worst_rhat": {}, "lowest_ess": {},
                "note": "no correlation of the copula to estimate: it holds one column"}
    C = copula_correlation(Lambda, sigma2)
    entries = judged.values(C)   # (chains, T, m)
    chains, T = entries.shape[:2]
    rhat, ess, tail = entry_diagnostics(entries)
    label = judged.labels(names)
    worst_r, worst_e = np.argsort(-np.nan_to_num(rhat, nan=np.inf))[:5], np.argsort(np.nan_to_num(ess))[:5]
    seen = np.flatnonzero(judged.seen >= 0)
    plain = entry_diagnostics(C[:, :, judged.a[seen], judged.b[seen]], tail=False)[0] if seen.size else rhat[:0]
    return {
        "entries": int(rhat.size),
        "chains": int(chains),
        "draws_per_chain": int(T),
        "rhat_max": _number(np.max(rhat)),
        "rhat_median": _number(np.median(rhat)),
        "share_rhat_below_1_01": float(np.mean(rhat < 1.01)),
        "ess_bulk_min": _number(np.min(ess)),
        "ess_bulk_median": _number(np.median(ess)),
        "ess_tail_min": _number(np.min(tail)),
        "ess_tail_median": _number(np.median(tail)),
        "worst_rhat": {label[i]: _number(rhat[i]) for i in worst_r},
        "lowest_ess": {label[i]: _number(ess[i]) for i in worst_e},
        "judged_where_seen": int(seen.size),
        "plain_rhat_max_where_seen": _number(np.max(plain)) if plain.size else None,
    }


def entry_diagnostics(entries: np.ndarray, tail: bool = True) -> tuple[np.ndarray, ...]:
    """Rank-normalized split R-hat, bulk ESS and (with ``tail``) tail ESS, each (m,), of draws
    ``entries`` (chains, T, m). One chain is compared with itself: its halves are two
    sequences (each split again). NaN when there are fewer than 4 draws a sequence."""
    if entries.shape[0] == 1:
        T = entries.shape[1]
        entries = entries[:, : T // 2 * 2].reshape(2, T // 2, -1)
    if entries.shape[1] < 4:
        nan = np.full(entries.shape[2], np.nan)
        return (nan, nan, nan) if tail else (nan, nan)
    return rhat_ess(entries, tail)


def chain_converged(Lambda: np.ndarray, sigma2: np.ndarray, judged: Judged,
                    rhat_max: float, ess_min: float) -> bool:
    """Whether one chain's draws Lambda (T, p, k), sigma2 (T, p) have mixed on the
    ``judged`` quantities of C (judged_entries): max split R-hat of its halves (each split
    again, as entry_diagnostics does for one chain) <= ``rhat_max`` and min bulk ESS >=
    ``ess_min``. True when there is nothing to judge."""
    if not judged.size:
        return True
    rhat, ess = entry_diagnostics(judged.values(copula_correlation(Lambda, sigma2))[None], tail=False)
    return bool(np.all(rhat <= rhat_max) and np.all(ess >= ess_min))


def _number(x) -> float | None:
    """A float for JSON, None when undefined (too few draws, or no posterior spread)."""
    return float(x) if np.isfinite(x) else None
