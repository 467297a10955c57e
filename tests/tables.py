"""Seeded tables with known structure, shared by the tests."""
import numpy as np
import pandas as pd
from scipy import stats

TRUE_R = np.array([[1.0, 0.6, 0.4, -0.4],
                   [0.6, 1.0, 0.2, 0.0],
                   [0.4, 0.2, 1.0, 0.5],
                   [-0.4, 0.0, 0.5, 1.0]])


def gaussian_copula_table(n: int, seed: int) -> pd.DataFrame:
    """A Gaussian copula with correlation TRUE_R on mixed margins: a lognormal income,
    a Poisson(3) count, a binary (30% ones) and a 4-level category cut from the 4th latent."""
    rng = np.random.default_rng(seed)
    x = rng.multivariate_normal(np.zeros(4), TRUE_R, size=n)
    u = stats.norm.cdf(x)
    return pd.DataFrame({
        "income": np.exp(1.0 + 0.7 * x[:, 0]),
        "visits": stats.poisson(3.0).ppf(u[:, 1]).astype(np.int64),
        "smoker": np.where(x[:, 2] > stats.norm.ppf(0.7), "yes", "no"),
        "region": np.array(["north", "east", "south", "west"])[np.digitize(x[:, 3], [-0.8, 0.0, 0.7])],
    })


def true_pair_draws(model) -> list[tuple[str, np.ndarray, float]]:
    """(pair, posterior draws of C, TRUE_R entry) for each pair of income, visits and smoker
    of a model fitted to ``gaussian_copula_table``."""
    from mixsynth.diagnostics import copula_correlation
    names = [c.name for c in model.columns_]
    idx = [names.index(v) for v in ("income", "visits", "smoker")]
    C = copula_correlation(model.draws_["Lambda"], model.draws_["sigma2"]).reshape(-1, len(names), len(names))
    return [(f"{names[idx[a]]} ~ {names[idx[b]]}", C[:, idx[a], idx[b]], TRUE_R[a, b])
            for a in range(3) for b in range(a + 1, 3)]
