"""The copula correlation C from posterior draws, and its convergence across chains."""
import arviz as az
import numpy as np


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
    positive) and between a value and the column that blanks it, its missingness indicator or
    a binary spelling its skip pattern (the value is never seen where it is blank).
    """
    level = [c.role in ("level", "dummy") for c in columns]
    iu = np.triu_indices(len(columns), 1)

    def judged(a, b):
        ca, cb = columns[a], columns[b]
        if ca.source == cb.source and level[a] and level[b]:
            return False
        for x, y in ((ca, cb), (cb, ca)):
            if y.role != "missing" and y.source in x.blanks:
                return False
        return True

    keep = np.array([judged(a, b) for a, b in zip(*iu)], dtype=bool)
    return iu[0][keep], iu[1][keep]


def convergence(Lambda: np.ndarray, sigma2: np.ndarray, columns: list) -> dict:
    """Rank-normalized split R-hat, bulk and tail effective sample sizes (arviz) of the
    entries of C that ``identified_pairs`` keeps, from draws Lambda (chains, T, p, k) and
    sigma2 (chains, T, p); ``columns`` are the latent columns (LatentColumn).

    Returns a JSON-ready summary: worst and median values and the worst entries' names;
    values are None when undefined (fewer than 4 draws per sequence). With no entry to
    judge (a copula of one column, the rest modelled by BART given it) there is nothing
    to mix: R-hat 1 and every draw effective, said so in ``note``.
    """
    names = [c.name for c in columns]
    iu = identified_pairs(columns)
    if not iu[0].size:
        draws = int(np.prod(sigma2.shape[:2]))
        return {"entries": 0, "chains": int(sigma2.shape[0]), "draws_per_chain": int(sigma2.shape[1]),
                "rhat_max": 1.0, "rhat_median": 1.0, "share_rhat_below_1_01": 1.0,
                "ess_bulk_min": float(draws), "ess_bulk_median": float(draws),
                "ess_tail_min": float(draws), "ess_tail_median": float(draws),
                "worst_rhat": {}, "lowest_ess": {},
                "note": "no correlation of the copula to estimate: it holds one column"}
    entries = copula_correlation(Lambda, sigma2)[:, :, iu[0], iu[1]]   # (chains, T, m)
    chains, T = entries.shape[:2]
    rhat, ess, tail = entry_diagnostics(entries)
    label = [f"{names[a]} ~ {names[b]}" for a, b in zip(*iu)]
    worst_r, worst_e = np.argsort(-np.nan_to_num(rhat, nan=np.inf))[:5], np.argsort(np.nan_to_num(ess))[:5]
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
    ds = az.convert_to_dataset({"C": entries})
    out = (az.rhat(ds)["C"].values, az.ess(ds, method="bulk")["C"].values)
    return (*out, az.ess(ds, method="tail")["C"].values) if tail else out


def chain_converged(Lambda: np.ndarray, sigma2: np.ndarray, pairs: tuple[np.ndarray, np.ndarray],
                    rhat_max: float, ess_min: float) -> bool:
    """Whether one chain's draws Lambda (T, p, k), sigma2 (T, p) have mixed on the entries
    ``pairs`` of C (identified_pairs): max split R-hat of its halves (each split again, as
    entry_diagnostics does for one chain) <= ``rhat_max`` and min bulk ESS >= ``ess_min``.
    True when there is no entry to judge."""
    if not pairs[0].size:
        return True
    rhat, ess = entry_diagnostics(copula_correlation(Lambda, sigma2)[None, :, pairs[0], pairs[1]], tail=False)
    return bool(np.all(rhat <= rhat_max) and np.all(ess >= ess_min))


def _number(x) -> float | None:
    """A float for JSON, None when undefined (too few draws, or no posterior spread)."""
    return float(x) if np.isfinite(x) else None
