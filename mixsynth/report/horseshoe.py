"""The paper's Bayesian regressions: horseshoe priors on the slopes, fitted with PyMC (the
optional ``bayes`` extra), summarized by posterior means and 95% credible intervals so the
report compares them with the same measures as the frequentist fits.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..tableio import InputError


def fit_horseshoe(data: pd.DataFrame, formula: str, family: str = "ols", draws: int = 1000,
                  tune: int = 1000, chains: int = 2, seed: int = 0) -> dict:
    """Posterior summary of a regression with a horseshoe prior on every slope.

    ``data`` holds complete cases (already standardized as the caller wants); the design comes
    from the formula (patsy, as statsmodels builds it). Prior (non-centered): slope_j =
    z_j tau lambda_j with z_j ~ N(0, 1), lambda_j ~ HalfCauchy(1), tau ~ HalfCauchy(1);
    intercept ~ N(0, 10^2) on the standardized response scale; OLS: sigma ~ HalfNormal(1)
    on that scale. The response is standardized for the fit and the summaries mapped back.
    Returns {"b", "se", "lo", "hi"} (pandas Series indexed by term: posterior mean, sd,
    2.5% and 97.5% quantiles) and "n" (rows), like the frequentist fits.
    """
    try:
        import pymc as pm
    except ImportError as exc:
        raise InputError("the Bayesian regression needs PyMC: pip install -e '.[bayes]'") from exc
    from patsy import dmatrices

    y, X = dmatrices(formula, data, return_type="dataframe")
    names = list(X.columns)
    slopes = [i for i, n in enumerate(names) if n != "Intercept"]
    y = y.iloc[:, 0].to_numpy(float)
    Xs = X.to_numpy(float)
    center, scale = (y.mean(), y.std()) if family == "ols" else (0.0, 1.0)
    scale = scale if scale > 0 else 1.0
    has_intercept = "Intercept" in names
    with pm.Model():
        tau = pm.HalfCauchy("tau", 1.0)
        lam = pm.HalfCauchy("lam", 1.0, shape=len(slopes))
        z = pm.Normal("z", 0.0, 1.0, shape=len(slopes))
        slope = pm.Deterministic("slope", z * tau * lam)
        mu = pm.math.dot(Xs[:, slopes], slope)
        if has_intercept:
            mu = mu + pm.Normal("intercept", 0.0, 10.0)
        if family == "ols":
            pm.Normal("y", mu, pm.HalfNormal("sigma", 1.0), observed=(y - center) / scale)
        elif family == "logit":
            pm.Bernoulli("y", logit_p=mu, observed=y)
        else:
            raise ValueError(f"unknown family {family!r}")
        trace = pm.sample(draws=draws, tune=tune, chains=chains, cores=1, random_seed=seed,
                          target_accept=0.95, progressbar=False, compute_convergence_checks=False)
    post = trace.posterior
    b = np.zeros((post.sizes["chain"] * post.sizes["draw"], len(names)))
    b[:, slopes] = post["slope"].to_numpy().reshape(len(b), -1) * scale
    if has_intercept:
        b[:, names.index("Intercept")] = post["intercept"].to_numpy().reshape(-1) * scale + center
    series = lambda v: pd.Series(v, index=names)
    return {"b": series(b.mean(axis=0)), "se": series(b.std(axis=0, ddof=1)),
            "lo": series(np.quantile(b, 0.025, axis=0)), "hi": series(np.quantile(b, 0.975, axis=0)),
            "n": int(len(y))}
