"""A large file's copula is fitted on a subsample (sampler.rows) that keeps every row group,
its marginals and the synthetic file's size on every row, and the correlations still hold."""
import numpy as np
import pytest

from mixsynth import CopulaSynthesizer, SamplerSettings, infer_spec, subsample
from mixsynth.config import InputError
from mixsynth.schema import to_codes
from tables import gaussian_copula_table, true_pair_draws

ROWS = 12_000
KEPT = 2_000


@pytest.fixture(scope="module")
def table():
    t = gaussian_copula_table(ROWS, seed=5)
    t.loc[t.index[:4_000:25], "visits"] = np.nan     # 160 blank cells: about 27 in a 1-in-6 sample
    return t


@pytest.fixture(scope="module")
def fitted(table):
    settings = SamplerSettings(sweeps=1200, burn_in=400, thin=4, chains=1, rows=KEPT)
    return CopulaSynthesizer(infer_spec(table), settings, seed=3).fit(table)


def test_every_row_group_keeps_its_rows(fitted, table):
    full = fitted.layout_.constraints(to_codes(table, fitted.spec_))
    rows = subsample.copula_rows(full, KEPT, seed=3)
    assert np.array_equal(rows, subsample.copula_rows(full, KEPT, seed=3))   # the same seed, the same rows
    assert not np.array_equal(rows, subsample.copula_rows(full, KEPT, seed=4))
    kept = np.zeros(ROWS, dtype=bool)
    kept[rows] = True
    groups = subsample.row_groups(full)
    assert any(g.size == 160 for g in groups)   # the blank cells of visits are a group
    for g in groups:
        assert kept[g].sum() >= min(subsample.MIN_GROUP_ROWS, g.size)
    # a random sample of 2,000 keeps about 27 of the 160 blank rows: the top-up adds the rest
    assert KEPT < rows.size <= KEPT + subsample.MIN_GROUP_ROWS * len(groups)
    assert fitted.copula_rows_ == rows.size and fitted.convergence_["rows"] == rows.size
    assert subsample.copula_rows(full, ROWS, seed=3) is None


def test_the_subsample_recovers_the_correlations(fitted):
    for pair, draws, true in true_pair_draws(fitted):
        lo, hi = np.quantile(draws, [0.005, 0.995])
        assert lo <= true <= hi, (pair, lo, hi)


def test_marginals_and_file_size_come_from_every_row(fitted, table):
    syn = fitted.sample(seed=2)
    assert len(syn) == ROWS and fitted.n_rows_ == ROWS
    assert fitted.marginals_["income"].to_state()[0]["n"] == ROWS   # every real row's value, not the subsample's
    assert abs((syn["smoker"] == "yes").mean() - (table["smoker"] == "yes").mean()) < 0.02
    assert abs(syn["visits"].isna().mean() - table["visits"].isna().mean()) < 0.01


def test_rows_below_the_floor_are_refused():
    with pytest.raises(InputError, match="rows must be a whole number of at least 1,000"):
        SamplerSettings(rows=500)
