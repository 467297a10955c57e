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


def convergence(Lambda: np.ndarray, sigma2: np.ndarray, columns: list) -> dict:
    """R-hat (rank-normalized, split) and bulk effective sample size of the entries of C
    that link two different input variables, from draws Lambda (chains, T, p, k) and
    sigma2 (chains, T, p); ``columns`` are the latent columns (LatentColumn).

    Correlations between two levels of one categorical are left out: the data fix only
    which level is positive, so that block is informed mostly by the prior and wanders
    without changing the fit. Returns a JSON-ready summary: worst and median values and the
    worst entries' names; values are None when undefined (fewer than 4 draws per sequence).
    """
    names = [c.name for c in columns]
    level = [c.role in ("level", "dummy") for c in columns]
    C = copula_correlation(Lambda, sigma2)
    iu = np.triu_indices(len(columns), 1)
    between = [columns[a].source != columns[b].source or not (level[a] and level[b]) for a, b in zip(*iu)]
    iu = (iu[0][between], iu[1][between])
    entries = C[:, :, iu[0], iu[1]]                              # (chains, T, m)
    chains, T = entries.shape[:2]
    if chains == 1:   # R-hat needs two sequences: compare the chain's halves
        entries = entries[:, : T // 2 * 2].reshape(2, T // 2, -1)
    if entries.shape[1] < 4:   # too few draws to say anything
        nan = np.full(entries.shape[2], np.nan)
        rhat, ess = nan, nan
    else:
        ds = az.convert_to_dataset({"C": entries})
        rhat = az.rhat(ds)["C"].values
        ess = az.ess(ds, method="bulk")["C"].values
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
        "worst_rhat": {label[i]: _number(rhat[i]) for i in worst_r},
        "lowest_ess": {label[i]: _number(ess[i]) for i in worst_e},
    }


def _number(x) -> float | None:
    """A float for JSON, None when undefined (too few draws, or no posterior spread)."""
    return float(x) if np.isfinite(x) else None
