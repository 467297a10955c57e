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


def convergence(Lambda: np.ndarray, sigma2: np.ndarray, names: list[str]) -> dict:
    """R-hat (rank-normalized, split) and bulk effective sample size of every off-diagonal
    entry of C, from draws Lambda (chains, T, p, k) and sigma2 (chains, T, p).

    Returns a JSON-ready summary: worst and median values and the worst entries' names.
    """
    C = copula_correlation(Lambda, sigma2)
    iu = np.triu_indices(len(names), 1)
    entries = C[:, :, iu[0], iu[1]]                              # (chains, T, m)
    ds = az.convert_to_dataset({"C": entries})
    rhat = az.rhat(ds)["C"].values
    ess = az.ess(ds, method="bulk")["C"].values
    # Entries with no posterior spread (e.g. a constant draw) have undefined R-hat.
    rhat = np.where(np.isfinite(rhat), rhat, 1.0)
    ess = np.where(np.isfinite(ess), ess, float(entries.shape[0] * entries.shape[1]))
    label = [f"{names[a]} ~ {names[b]}" for a, b in zip(*iu)]
    worst_r, worst_e = np.argsort(rhat)[::-1][:5], np.argsort(ess)[:5]
    return {
        "entries": int(rhat.size),
        "chains": int(entries.shape[0]),
        "draws_per_chain": int(entries.shape[1]),
        "rhat_max": float(rhat.max()),
        "rhat_median": float(np.median(rhat)),
        "share_rhat_below_1_01": float(np.mean(rhat < 1.01)),
        "ess_bulk_min": float(ess.min()),
        "ess_bulk_median": float(np.median(ess)),
        "worst_rhat": {label[i]: float(rhat[i]) for i in worst_r},
        "lowest_ess": {label[i]: float(ess[i]) for i in worst_e},
    }
