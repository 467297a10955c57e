"""Declared responses keep nonlinear effects and interactions (rank-likelihood BART)."""
import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import special, stats

from mixsynth import BartSettings, CopulaSynthesizer, RunConfig, SamplerSettings, infer_spec, InputError

FORMULA = "y1 ~ x1 * x2 + x3 + I(x3 ** 2) + x4 + x5 + C(g)"
FAST_BART = {"trees": 100, "burn_in": 100, "draws": 300}


def friedman_table(n: int, seed: int) -> pd.DataFrame:
    """Friedman's function plus a categorical effect; y2 follows y1 (correlation ~0.8)."""
    rng = np.random.default_rng(seed)
    x = rng.random((n, 5))
    g = rng.choice(["a", "b", "c"], size=n, p=[0.5, 0.3, 0.2])
    f = (10 * np.sin(np.pi * x[:, 0] * x[:, 1]) + 20 * (x[:, 2] - 0.5) ** 2 + 10 * x[:, 3] + 5 * x[:, 4]
         + np.select([g == "b", g == "c"], [3.0, -2.0], 0.0))
    y1 = f + rng.normal(0, 1.5, n)
    y2 = 0.5 * y1 + 4 * x[:, 4] + rng.normal(0, 2.0, n)
    table = pd.DataFrame({f"x{j + 1}": x[:, j] for j in range(5)})
    table["g"] = g
    table["y1"], table["y2"] = y1, y2
    return table


def overlap(real: pd.DataFrame, syn: pd.DataFrame) -> float:
    """Mean confidence-interval overlap (Karr et al.) of the declared regression."""
    a, b = smf.ols(FORMULA, real).fit().conf_int(), smf.ols(FORMULA, syn).fit().conf_int()
    inter = np.minimum(a[1], b[1]) - np.maximum(a[0], b[0])
    return float((0.5 * (inter / (a[1] - a[0]) + inter / (b[1] - b[0]))).mean())


@pytest.fixture(scope="module")
def table():
    return friedman_table(2000, seed=3)


@pytest.fixture(scope="module")
def models(table):
    settings = SamplerSettings(sweeps=800, burn_in=300, thin=5, chains=1)
    with_bart = RunConfig(settings, responses=("y1", "y2"), bart=BartSettings(**FAST_BART))
    return {"bart": CopulaSynthesizer(infer_spec(table), with_bart, seed=1).fit(table),
            "copula": CopulaSynthesizer(infer_spec(table), RunConfig(settings, responses="none"), seed=1).fit(table)}


def test_interaction_regression_survives_only_with_bart(table, models):
    """A synthesizer drawing from the true distribution scores about 0.7-0.8 here; the
    copula alone cannot carry sin(x1 x2) or (x3 - 1/2)^2 and scores below 0. One fit's
    score moves with its seed (fits 1-3: 0.58, 0.63, 0.71 with BART's linear term, 0.60,
    0.64, 0.74 without), so the bound sits below that spread."""
    bart = np.mean([overlap(table, models["bart"].sample(seed=s)) for s in range(5)])
    copula = np.mean([overlap(table, models["copula"].sample(seed=s)) for s in range(5)])
    assert bart > 0.5
    assert copula < 0.2 and copula < bart - 0.4


def test_two_responses_stay_correlated_and_keep_their_marginals(table, models):
    syn = models["bart"].sample(n_rows=6000, seed=5)
    assert abs(syn["y1"].corr(syn["y2"]) - table["y1"].corr(table["y2"])) < 0.05
    for y in ("y1", "y2"):
        assert stats.ks_2samp(syn[y], table[y]).statistic < 0.05
        lo, hi = models["bart"].marginals_[y].ppf(np.array([0.0, 1.0]))   # the smoothed support
        assert syn[y].between(lo, hi).all()
        assert np.mean(~syn[y].between(table[y].min(), table[y].max())) < 0.01


def test_responses_leave_the_copula_and_the_model_round_trips(models, tmp_path):
    model = models["bart"]
    assert [c.name for c in model.columns_ if c.source in ("y1", "y2")] == []
    assert [r.name for r in model.responses_] == ["y1", "y2"]
    assert model.responses_[1].design.features[-1] == "y1"      # y2 is modelled given y1
    model.save(tmp_path / "m.npz")
    loaded = CopulaSynthesizer.load(tmp_path / "m.npz")
    pd.testing.assert_frame_equal(loaded.sample(seed=2), model.sample(seed=2))
    a, b = model.sample(seed=2, response_draws=True), model.sample(seed=2)
    assert not a["y1"].equals(b["y1"]) and a["x1"].equals(b["x1"])


def test_missing_responses_are_reproduced():
    table = friedman_table(1500, seed=4)
    rng = np.random.default_rng(0)
    table.loc[rng.random(len(table)) < 0.1 + 0.2 * (table["x4"] > 0.7), "y1"] = np.nan
    config = RunConfig(SamplerSettings(sweeps=1200, burn_in=400, thin=4, chains=1), responses=("y1",),
                       bart=BartSettings(**FAST_BART))
    model = CopulaSynthesizer(infer_spec(table), config, seed=0).fit(table)
    syn = model.sample(n_rows=6000, seed=0)
    assert abs(syn["y1"].isna().mean() - table["y1"].isna().mean()) < 0.02
    assert syn.loc[syn["x4"] > 0.7, "y1"].isna().mean() > syn.loc[syn["x4"] < 0.5, "y1"].isna().mean() + 0.1


def test_a_categorical_response_keeps_a_nonmonotone_share_and_one_level_a_row(tmp_path):
    """A 3-level categorical whose middle level peaks at mid-range of x and whose blanks
    rise with x, declared a response: continuation-ratio probit BART gives every row one
    level, keeps each level's share by band of x (within 0.05 of the real, where the
    copula's level columns can only rise or fall), reproduces the blanks where they are,
    is planned as the fits it runs (for the time estimate),
    and survives a save and load; a categorical of more than MAX_RESPONSE_LEVELS levels is
    refused by name."""
    from mixsynth.config import MAX_RESPONSE_LEVELS
    rng = np.random.default_rng(1)
    n = 3000
    x = rng.uniform(-2, 2, n)
    logits = np.column_stack([-1.5 * x, 1.5 - x ** 2, 1.5 * x - 1])
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    g = np.asarray(["low", "mid", "high"], dtype=object)[(rng.random(n)[:, None] > p.cumsum(axis=1)).sum(axis=1)]
    g[rng.random(n) < 0.05 + 0.1 * (x > 1)] = None
    table = pd.DataFrame({"x": x, "z": x + rng.standard_normal(n), "g": g})
    config = RunConfig(SamplerSettings(sweeps=2000, burn_in=1000, thin=4, chains=1), responses=("g",))
    model = CopulaSynthesizer(infer_spec(table), config, seed=0).fit(table)
    assert model.response_summary()["links"] == {"g": "categorical"}
    seen = table["g"].value_counts().to_numpy()   # the time estimate counts the fits BART runs:
    assert model.response_fits_ == [[(True, seen.sum(), 2, 0), (True, seen.sum() - seen[0], 2, 0)]]   # most frequent first
    assert len(model.responses_[0].parts) == 2
    model.save(tmp_path / "m.npz")
    loaded = CopulaSynthesizer.load(tmp_path / "m.npz")
    syn = loaded.sample(n_rows=9000, seed=3)
    pd.testing.assert_frame_equal(syn.head(500), model.sample(n_rows=9000, seed=3).head(500))
    assert set(syn["g"].dropna()) == {"low", "mid", "high"}
    bands = [(-2, -1), (-1, 1), (1, 2)]
    for lo, hi in bands:
        real_band, syn_band = table[table["x"].between(lo, hi)], syn[syn["x"].between(lo, hi)]
        for level in ("low", "mid", "high"):
            assert abs((real_band["g"] == level).mean() - (syn_band["g"] == level).mean()) < 0.05, (lo, level)
    # the blanks step from 5% to 15% at x = 1, which the copula's blank indicator can only
    #   follow as a smooth rise: over seeds 0-2 it gives 0.106-0.130 above 1 against the real
    #   0.157 (0.055 below); with no dependence on x both would be 0.075
    blank_above = syn.loc[syn["x"] > 1, "g"].isna().mean()
    assert abs(blank_above - table.loc[table["x"] > 1, "g"].isna().mean()) < 0.06
    assert blank_above > syn.loc[syn["x"] < 1, "g"].isna().mean() + 0.03
    wide = pd.DataFrame({"x": np.arange(900.0), "g": [f"v{i % (MAX_RESPONSE_LEVELS + 1)}" for i in range(900)]})
    with pytest.raises(InputError, match="'g'.*more than the"):
        CopulaSynthesizer(infer_spec(wide), RunConfig(SamplerSettings(sweeps=20, burn_in=10, chains=1),
                                                      responses=("g",))).fit(wide)


def test_the_latent_scale_settles_within_the_burn_in():
    """Started from normal scores with sigma^2 = 1 (the prototype's slow start), the share
    of latent variance that f explains reaches the truth within the 100 burn-in sweeps and
    the kept error variances are stationary."""
    from mixsynth.responses import BartSettings, Design, fit_response
    rng = np.random.default_rng(0)
    n = 3000
    x = rng.random((n, 6))
    f = 10 * np.sin(np.pi * x[:, 0] * x[:, 1]) + 20 * (x[:, 2] - 0.5) ** 2 + 10 * x[:, 3] + 5 * x[:, 4]
    y = np.round(f + rng.normal(0, 1.5, n))                      # about 30 tied values
    values = {f"x{j}": x[:, j] for j in range(6)}
    design = Design.from_values(values, list(values), {})
    fit = fit_response("y", y, design.matrix(values), design,
                       BartSettings(trees=100, burn_in=100, draws=200), np.random.SeedSequence(2))
    fhat = fit.predict(design.matrix(values))
    share = fhat.var() / (fhat.var() + fit.sigma2.mean())
    truth = f.var() / (f.var() + 1.5 ** 2)
    assert abs(share - truth) < 0.03
    assert np.corrcoef(fhat, f)[0, 1] > 0.98
    first, last = fit.sigma2[:50].mean(), fit.sigma2[-50:].mean()
    assert abs(first - last) / last < 0.1


def test_each_group_keeps_its_own_spread():
    """A tied response whose error sd is 0.5, 0.3 and 0.8 in three groups: the variance
    forest finds each group's sd on the standardized latent scale (within 0.1; one error
    variance would give every group 0.57), and synthetic responses spread in each group as
    the real ones do (normal-score sd within 0.05 of the real)."""
    from mixsynth.responses import BartSettings, Design, fit_response
    rng = np.random.default_rng(0)
    n = 3000
    g = rng.integers(0, 3, n)
    sd, mean = np.array([0.5, 0.3, 0.8]), np.array([-1.0, 0.0, 1.0])
    z = mean[g] + sd[g] * rng.standard_normal(n)
    y = np.round(np.exp(z), 1)                                    # ties, a monotone transform
    values = {"g": g.astype(float), "y": y}
    design = Design.from_values(values, ["g"], {"g": 3})
    X = design.matrix(values)
    fit = fit_response("y", y, X, design, BartSettings(), np.random.SeedSequence(1))
    found = fit.error_sd(X)
    for k in range(3):
        assert abs(found[g == k].mean() - sd[k] / z.std()) < 0.1
    u = fit.draw_latent(X, np.random.default_rng(2))
    real_scores = stats.norm.ppf((stats.rankdata(y) - 0.5) / n)
    syn_scores = stats.norm.ppf(u)
    for k in range(3):
        assert abs(syn_scores[g == k].std() - real_scores[g == k].std()) < 0.05


def test_a_fit_on_lazy_rows_is_the_fit_on_the_whole_matrix():
    """The pipeline hands BART its features as Rows (built only for the rows a fit keeps,
    so a large table's one-hot matrix is never whole): the same subsample, the same
    forests, for a rank response and for a categorical's continuation-ratio parts."""
    from mixsynth.responses import BartSettings, Design, Rows, fit_categorical, fit_response

    rng = np.random.default_rng(0)
    n = 1500
    values = {"a": rng.integers(0, 3, n).astype(float), "x": rng.normal(size=n),
              "y": rng.normal(size=n), "c": rng.integers(0, 3, n).astype(float)}
    values["x"][:40] = np.nan
    design = Design.from_values(values, ["a", "x"], {"a": 3})
    rows = Rows(design, {k: values[k] for k in design.features})
    settings = BartSettings(max_rows=600, burn_in=10, draws=8, keep_every=4, trees=20)
    whole = fit_response("y", values["y"], design.matrix(values), design, settings, np.random.SeedSequence(3))
    lazy = fit_response("y", values["y"], rows, design, settings, np.random.SeedSequence(3))
    assert whole.forests_json == lazy.forests_json and np.array_equal(whole.sigma2, lazy.sigma2)
    whole = fit_categorical("c", values["c"], design.matrix(values), design, settings, np.random.SeedSequence(4))
    lazy = fit_categorical("c", values["c"], rows, design, settings, np.random.SeedSequence(4))
    assert [p.forests_json for p in whole.parts] == [p.forests_json for p in lazy.parts]


def _slope_ratios(seed: int, linear: bool, n: int = 1200, p: int = 16) -> np.ndarray:
    """Least-squares slopes of BART's posterior mean f over those of the response's normal
    scores, for the two strongest effects of a weak linear signal (R^2 ~ 0.1) among p
    numeric features, two of them correlated (0.8)."""
    from mixsynth.responses import BartSettings, Design, fit_response
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    X[:, 1] = 0.8 * X[:, 0] + 0.6 * X[:, 1]
    y = 0.25 * X[:, 0] + 0.1 * X[:, 1] - 0.2 * X[:, 2] + rng.normal(size=n)
    scores = stats.norm.ppf((stats.rankdata(y) - 0.5) / n)
    design = Design(tuple(f"x{j}" for j in range(p)), (0,) * p, (-99.0,) * p)
    model = fit_response("y", y, X, design, BartSettings(linear=linear), np.random.SeedSequence(seed))
    A = np.column_stack([np.ones(n), X])
    ratio = np.linalg.lstsq(A, model.predict(X), rcond=None)[0] / np.linalg.lstsq(A, scores, rcond=None)[0]
    return ratio[[1, 3]]


def test_the_linear_term_keeps_weak_linear_effects_that_the_trees_shrink():
    """Trees alone return 0.80-0.95 of the slopes (NHEFS's weight gain lost a quarter of
    its age effect); with the linear term the slopes come back whole."""
    with_linear = np.mean([_slope_ratios(seed, True) for seed in range(3)])
    trees_only = np.mean([_slope_ratios(seed, False) for seed in range(3)])
    assert 0.93 < with_linear < 1.1
    assert trees_only < 0.93 and with_linear - trees_only > 0.07


def test_a_response_with_blanks_keeps_the_marginal_of_its_seen_values():
    """Wage is blank for the non-employed, who would earn less: the latent marginal of the
    response is taken over the rows that keep a value, so the synthetic wages match the
    real ones; over every row (blanks included) the low wages went to rows then blanked,
    and the wages left were too high."""
    rng = np.random.default_rng(4)
    n = 2000
    x = rng.normal(size=n)
    employed = rng.random(n) < special.expit(2.0 * x)
    wage = np.exp(3 + 0.5 * x + 0.3 * np.sin(3 * x) + rng.normal(0, 0.3, n))
    table = pd.DataFrame({"x": x, "employed": employed.astype(int), "wage": np.where(employed, wage, np.nan)})
    config = RunConfig(SamplerSettings(sweeps=600, burn_in=300, thin=3, chains=1), responses=("wage",),
                       bart=BartSettings(**FAST_BART))
    model = CopulaSynthesizer(infer_spec(table), config, seed=0).fit(table)
    syn = model.sample(n_rows=4000, seed=1)
    seen = table["wage"].dropna()
    assert abs(syn["wage"].isna().mean() - table["wage"].isna().mean()) < 0.04
    assert stats.ks_2samp(syn["wage"].dropna(), seen).statistic < 0.05
    assert abs(np.median(syn["wage"].dropna()) / np.median(seen) - 1) < 0.05


def test_one_stored_draw_predicts_as_that_column_of_every_draw():
    """``response_draws`` evaluates one stored forest (and its variance forest) instead of
    every one: the same values as that column of the full prediction."""
    from stochtree import Dataset
    from mixsynth.responses import BartSettings, Design, fit_response
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = X[:, 0] + rng.normal(size=400) * (1 + 0.5 * (X[:, 1] > 0))
    model = fit_response("y", y, X, Design(("a", "b", "c"), (0, 0, 0), (-9.0,) * 3),
                         BartSettings(trees=20, variance_trees=10, burn_in=10, draws=20, keep_every=4),
                         np.random.SeedSequence(0))
    data = Dataset()
    data.add_covariates(X)
    every, spread = model.forests.predict(data), model.variance_forests.predict(data)
    for draw in (2, 7):   # 7: modulo the 5 stored forests
        beta = model.beta[draw % 5]
        np.testing.assert_allclose(model.predict(X, draw), every[:, draw % 5] + model.linear.basis(X) @ beta)
        np.testing.assert_allclose(model.error_sd(X, draw), np.sqrt(spread[:, draw % 5]))
