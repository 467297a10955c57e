"""The compiled part of the chain statistics (mixsynth/chain_stats.py): effective sample
sizes of many quantities at once, the autocovariances and Geyer's initial monotone sequence
in a loop per quantity, as arviz's ``_ess``."""
import numba as nb
import numpy as np


@nb.njit(parallel=True, cache=True)
def ess_many(x):
    """(m,) effective sample sizes of x (m, sequences, n): row i holds one quantity's
    sequences (split chains), each of n draws; the quantities run in parallel."""
    out = np.empty(x.shape[0])
    for i in nb.prange(x.shape[0]):
        out[i] = _ess(x[i])
    return out


@nb.njit(cache=True)
def _acov_mean(d, t):
    """Mean over the sequences of the lag-t autocovariance of centred draws d (c, n), / n."""
    c, n = d.shape
    total = 0.0
    for j in range(c):
        s = 0.0
        for k in range(n - t):
            s += d[j, k] * d[j, k + t]
        total += s / n
    return total / c


@nb.njit(cache=True)
def _ess(x):
    """ESS of one quantity's sequences x (c, n): Geyer's initial positive, then monotone,
    sequence of the combined autocorrelations, as arviz's ``_ess``."""
    c, n = x.shape
    if x.max() - x.min() < 1e-15:
        return float(x.size)
    means = np.empty(c)
    d = np.empty_like(x)
    for j in range(c):
        means[j] = x[j].mean()
        d[j] = x[j] - means[j]
    mean_var = _acov_mean(d, 0) * n / (n - 1.0)
    var_plus = mean_var * (n - 1.0) / n
    if c > 1:
        var_plus += np.var(means) * c / (c - 1.0)
    rho = np.zeros(n)
    rho_even = 1.0
    rho[0] = rho_even
    rho_odd = 1.0 - (mean_var - _acov_mean(d, 1)) / var_plus
    rho[1] = rho_odd
    t = 1
    while t < n - 3 and rho_even + rho_odd > 0.0:
        rho_even = 1.0 - (mean_var - _acov_mean(d, t + 1)) / var_plus
        rho_odd = 1.0 - (mean_var - _acov_mean(d, t + 2)) / var_plus
        if rho_even + rho_odd >= 0:
            rho[t + 1] = rho_even
            rho[t + 2] = rho_odd
        t += 2
    max_t = t - 2
    if rho_even > 0:
        rho[max_t + 1] = rho_even
    t = 1
    while t <= max_t - 2:
        if rho[t + 1] + rho[t + 2] > rho[t - 1] + rho[t]:
            rho[t + 1] = (rho[t - 1] + rho[t]) / 2.0
            rho[t + 2] = rho[t + 1]
        t += 2
    draws = c * n
    tau = -1.0 + 2.0 * rho[:max_t + 1].sum() + rho[max_t + 1:max_t + 2].sum()
    tau = max(tau, 1.0 / np.log10(draws))
    if np.isnan(rho).any():
        return np.nan
    return draws / tau
