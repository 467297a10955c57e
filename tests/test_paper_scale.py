"""The paper-scale table (n = 19,364, Table 1 layout): a full fit tells the same story.
Slow: run with `make test-slow` (about 5 minutes on 2 cores)."""
import numpy as np
import pytest
from scipy import stats

from mixsynth import CopulaSynthesizer, SamplerSettings, infer_spec
from mixsynth.datasets import paper_layout

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def fitted():
    table = paper_layout(seed=0)
    settings = SamplerSettings(sweeps=4000, burn_in=2000, thin=4, chains=2)
    model = CopulaSynthesizer(infer_spec(table), settings, seed=1).fit(table)
    return table, model, model.sample(seed=1)


def test_score_means_by_race_and_education(fitted):
    real, _, syn = fitted
    for group in ("M_RACEGROUP", "M_EDUCGROUP"):
        diff = syn.groupby(group)["ReadScal1"].mean() - real.groupby(group)["ReadScal1"].mean()
        sizes = real[group].value_counts()
        se = real["ReadScal1"].std() / np.sqrt(sizes[diff.index])
        assert np.all(np.abs(diff) < 1.0 + 3 * se), (group, diff.round(2).to_dict())


def test_pairwise_rank_correlations(fitted):
    real, _, syn = fitted
    numeric = [c for c in real.columns if real[c].dtype.kind in "if" or str(real[c].dtype) == "Int64"]
    r = real[numeric].astype(float).corr(method="spearman")
    s = syn[numeric].astype(float).corr(method="spearman")
    gap = (r - s).abs().values[np.triu_indices(len(numeric), 1)]
    # A Gaussian copula keeps normal-score correlations; Spearman's can move a little where
    # the real dependence is not Gaussian (the seasonal temperatures, the lead threshold).
    assert gap.mean() < 0.02
    worst = (r - s).abs().stack().idxmax()
    assert gap.max() < 0.1, worst


def test_missingness_marginals_and_convergence(fitted):
    real, model, syn = fitted
    for col in real.columns[real.isna().any()]:
        assert abs(syn[col].isna().mean() - real[col].isna().mean()) < 0.01
    assert stats.ks_2samp(real["PM25_1yr_June"], syn["PM25_1yr_June"]).statistic < 0.03
    assert model.convergence_["rhat_median"] < 1.1
