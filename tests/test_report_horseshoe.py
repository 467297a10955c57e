"""The paper's Bayesian horseshoe regression (optional 'bayes' extra): posterior intervals
that cover the truth, shrink a null slope, and feed the same comparisons as the OLS fit."""
import numpy as np
import pandas as pd
import pytest

from mixsynth.report.regressions import regression
from mixsynth.report.horseshoe import fit_horseshoe

# PyMC compiles and samples: minutes on a busy 2-core machine. `make test-slow` installs the
# 'bayes' extra these need.
pytestmark = pytest.mark.slow

FAST = {"draws": 400, "tune": 400, "chains": 2}


def _table(n, seed):
    rng = np.random.default_rng(seed)
    x1, x2, x3 = rng.normal(size=(3, n))
    g = rng.choice(["a", "b"], n)
    y = 2.0 + 1.5 * x1 - 0.8 * x2 + 0.0 * x3 + 0.5 * (g == "b") + rng.normal(0, 1, n)
    return pd.DataFrame({"y": y, "x1": x1, "x2": x2, "x3": x3, "g": g})


def test_horseshoe_covers_the_truth_and_matches_ols_on_a_clear_signal():
    fit = fit_horseshoe(_table(400, 0), "y ~ x1 + x2 + x3 + C(g)", seed=1, **FAST)
    truth = {"Intercept": 2.0, "x1": 1.5, "x2": -0.8, "x3": 0.0, "C(g)[T.b]": 0.5}
    for term, value in truth.items():
        assert fit["lo"][term] < value < fit["hi"][term], term
    assert abs(fit["b"]["x3"]) < 0.1 and fit["n"] == 400
    assert fit["se"]["x1"] == pytest.approx(1 / np.sqrt(400), rel=0.35)   # about sigma / sqrt(n)


def test_bayesian_comparison_tells_a_faithful_file_from_a_broken_one():
    real, faithful = _table(400, 0), _table(400, 1)
    broken = faithful.assign(x1=np.random.default_rng(2).permutation(faithful["x1"]))
    good = regression(real, faithful, "y ~ x1 + x2 + x3", standardize=False, bayesian={**FAST, "seed": 3})
    bad = regression(real, broken, "y ~ x1 + x2 + x3", standardize=False, bayesian={**FAST, "seed": 3})
    assert good["mean_cio"] > 0.4 and good["sign_agreement"] >= 0.75
    x1 = next(t for t in bad["terms"] if t["term"] == "x1")
    assert x1["cio"] < 0 and x1["std_sq_diff"] > 100 and bad["mean_cio"] < good["mean_cio"]
