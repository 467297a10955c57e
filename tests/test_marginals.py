"""Marginals: empirical quantiles of rank columns, smoothed continuous marginals, state I/O."""
import json

import numpy as np
import pytest
from scipy import stats
from scipy.special import ndtr

from mixsynth.marginals import (HEAP_MIN_ROWS, EmpiricalMarginal, SmoothedMarginal, fit_marginal,
                                marginal_from_state)


def _rng(seed):
    return np.random.default_rng(seed)


# ---------------------------------------------------------------- empirical

def test_empirical_ppf_at_r_over_n_plus_1_is_rth_order_statistic():
    x = _rng(0).poisson(3.0, 57).astype(float)
    n = x.size
    m = EmpiricalMarginal(x)
    r = np.arange(1, n + 1)
    assert np.array_equal(m.ppf(r / (n + 1)), np.sort(x))
    # just above r/(n+1) the next order statistic is returned; the ends are clipped
    assert np.array_equal(m.ppf(r[:-1] / (n + 1) + 1e-4), np.sort(x)[1:])
    assert m.ppf(1e-9) == x.min() and m.ppf(1 - 1e-9) == x.max()


def test_empirical_cdf_is_scaled_ecdf():
    x = np.array([2.0, 0.0, 2.0, 5.0])
    m = EmpiricalMarginal(x)
    assert np.allclose(m.cdf([-1.0, 0.0, 1.0, 2.0, 5.0, 9.0]), np.array([0, 1, 1, 3, 4, 4]) / 5)


def test_empirical_ppf_reproduces_poisson_frequencies():
    rng = _rng(1)
    x = rng.poisson(4.0, 3000).astype(float)
    m = EmpiricalMarginal(x)
    y = m.ppf(rng.uniform(size=200_000))
    assert np.isin(y, x).all()
    values, counts = np.unique(x, return_counts=True)
    probs = counts / (x.size + 1)
    probs[-1] += 1 / (x.size + 1)            # u above n/(n+1) is clipped to the maximum
    observed = np.array([(y == v).sum() for v in values])
    assert observed.sum() == y.size
    assert stats.chisquare(observed, probs * y.size).pvalue > 1e-3


# ---------------------------------------------------------------- smoothed

def _ks_to_sample(marginal, x):
    """KS distance between the marginal's CDF and the ECDF of tie-free x (no draw noise)."""
    x = np.sort(x)
    f = marginal.cdf(x)
    n = x.size
    return max(np.abs(f - np.arange(1, n + 1) / n).max(), np.abs(f - np.arange(n) / n).max())


def test_smoothed_lognormal_matches_sample_with_new_nonnegative_values():
    rng = _rng(2)
    x = rng.lognormal(0.0, 1.0, 2000)
    m = SmoothedMarginal(x, lower=0.0)
    y = m.ppf(rng.uniform(size=20_000))
    assert stats.ks_2samp(y, x).statistic < 0.05
    assert _ks_to_sample(m, x) < 0.045
    assert not np.isin(y, x).any()
    assert y.min() >= 0.0
    assert np.unique(y).size == y.size
    assert m.atoms_.size == 0 and m.continuous_weight_ == 1.0


def test_log_scale_keeps_a_skewed_lower_tail_where_the_data_are():
    """A wage-like column (heavy right tail, smallest value 50): smoothing with one bandwidth
    set by the whole spread sends mass down to the bound at 0, which log(wage) magnifies;
    smoothing log(y) keeps the lower tail near the smallest values and the mean log."""
    rng = _rng(3)
    x = 50.0 + rng.lognormal(6.0, 0.9, 5000)
    u = rng.uniform(size=50_000)
    linear, log = SmoothedMarginal(x, lower=0.0), SmoothedMarginal(x, lower=0.0, scale="log")
    assert np.quantile(linear.ppf(u), 0.001) < 0.5 * x.min()           # the failure, measured
    y = log.ppf(u)
    assert np.quantile(y, 0.001) > 0.9 * x.min() and y.min() > 0
    assert abs(np.log(y).var() - np.log(x).var()) < 0.05 * np.log(x).var()
    assert stats.ks_2samp(y, x).statistic < 0.03
    with pytest.raises(ValueError, match="positive"):
        SmoothedMarginal(np.r_[x, 0.0], scale="log")


def test_fit_marginal_smooths_positive_right_skewed_columns_on_the_log_scale():
    rng = _rng(4)
    assert fit_marginal(rng.lognormal(0.0, 1.0, 500), "continuous", lower=0.0).scale == "log"
    assert fit_marginal(rng.normal(10.0, 1.0, 500), "continuous").scale == "linear"
    assert fit_marginal(rng.lognormal(0.0, 1.0, 500) - 0.5, "continuous").scale == "linear"


def test_smoothing_fills_the_gaps_between_values_too_rare_to_be_heaps():
    # 80 integer values, most held by fewer than HEAP_MIN_ROWS rows: not heaped, so the
    # draws spread across the gaps and no value is returned as it was
    rng = _rng(3)
    x = rng.integers(0, 80, 200).astype(float)
    counts = np.unique(x, return_counts=True)[1]
    assert counts[counts >= HEAP_MIN_ROWS].sum() < 0.5 * x.size and counts.max() < 0.05 * x.size
    m = SmoothedMarginal(x)
    assert m.atoms_.size == 0 and m.bandwidth_ > 1.0
    y = m.ppf(rng.uniform(size=20_000))
    frac = y - np.floor(y)
    assert abs(np.mean((frac > 0.25) & (frac < 0.75)) - 0.5) < 0.05
    assert not np.isin(y, x).any()


def test_a_heaped_column_keeps_its_heaps_exact_and_smooths_the_rest():
    # weights to the pound for 90% of the rows (the heaps), measured to 0.01 for the rest:
    # heaps come back exact with their shares, no value held by fewer than 5 rows comes back
    rng = _rng(4)
    n = 4000
    exact = np.round(rng.normal(170.0, 25.0, n), 2)
    x = np.where(rng.uniform(size=n) < 0.9, np.round(exact), exact)
    values, counts = np.unique(x, return_counts=True)
    heaps = values[counts >= HEAP_MIN_ROWS]
    m = SmoothedMarginal(x)
    assert np.array_equal(m.atoms_, heaps)
    y = m.ppf(rng.uniform(size=100_000))
    assert abs(np.isin(y, heaps).mean() - np.isin(x, heaps).mean()) < 0.01
    assert not np.isin(y, values[counts < HEAP_MIN_ROWS]).any()
    for v in (150.0, 170.0, 190.0):
        assert abs((y == v).mean() - (x == v).mean()) < 0.004
    assert stats.ks_2samp(y, x).statistic < 0.02


def test_reflection_at_lower_bound_keeps_mass_near_zero():
    # exponential: densest at the bound; truncation without reflection would halve the mass
    # near 0, no bound at all would give negative values
    rng = _rng(4)
    x = rng.exponential(1.0, 2000)
    m = SmoothedMarginal(x, lower=0.0)
    y = m.ppf(rng.uniform(size=20_000))
    assert y.min() >= 0.0
    assert abs(np.mean(y < np.quantile(x, 0.05)) - 0.05) < 0.01
    assert abs(np.mean(y < np.quantile(x, 0.5)) - 0.5) < 0.02
    assert stats.ks_2samp(y, x).statistic < 0.05
    assert _ks_to_sample(m, x) < 0.03


def test_reflection_at_both_bounds():
    rng = _rng(5)
    x = rng.uniform(0.0, 1.0, 2000)
    m = SmoothedMarginal(x, lower=0.0, upper=1.0)
    y = m.ppf(rng.uniform(size=20_000))
    assert y.min() >= 0.0 and y.max() <= 1.0
    assert abs(np.mean(y < 0.05) - 0.05) < 0.01 and abs(np.mean(y > 0.95) - 0.05) < 0.01
    assert stats.ks_2samp(y, x).statistic < 0.05


@pytest.mark.parametrize("lower, upper", [(None, None), (0.0, None), (0.0, 30.0)])
def test_grid_cdf_matches_exact_reflected_kernel_cdf(lower, upper):
    x = np.minimum(_rng(6).gamma(2.0, 2.0, 300), 30.0)
    m = SmoothedMarginal(x, lower=lower, upper=upper)
    h = m.bandwidth_
    lo_b = -np.inf if lower is None else lower
    up_b = np.inf if upper is None else upper
    points = np.concatenate([x] + [2 * b - x for b in (lo_b, up_b) if np.isfinite(b)])
    lo, hi = max(x.min() - 4 * h, lo_b), min(x.max() + 4 * h, up_b)

    def anti(t):
        return ndtr((t[:, None] - points[None, :]) / h).sum(axis=1)

    t = np.concatenate([np.linspace(lo, hi, 1500), x])
    exact = (anti(t) - anti(np.array([lo]))) / (anti(np.array([hi])) - anti(np.array([lo])))
    assert np.abs(m.cdf(t) - exact).max() < 1e-4
    assert m.grid_y_.min() >= lo_b and m.grid_y_.max() <= up_b


def test_silverman_bandwidth_and_iqr_fallback():
    x = _rng(7).normal(10.0, 3.0, 500)
    iqr = np.subtract(*np.percentile(x, [75, 25]))
    expected = 0.9 * min(x.std(ddof=1), iqr / 1.34) * 500 ** -0.2
    assert SmoothedMarginal(x).bandwidth_ == pytest.approx(expected, rel=1e-12)
    assert SmoothedMarginal(x, bandwidth=0.5).bandwidth_ == 0.5
    # 995 zeros (atom) + 3 sevens (too few rows to be a heap) + 2 others: IQR of the rest is 0
    rest = np.array([1.0, 7.0, 7.0, 7.0, 20.0])
    assert np.subtract(*np.percentile(rest, [75, 25])) == 0.0
    m = SmoothedMarginal(np.concatenate([np.zeros(995), rest]))
    assert np.array_equal(m.atoms_, [0.0])
    assert m.bandwidth_ == pytest.approx(0.9 * rest.std(ddof=1) * 5 ** -0.2, rel=1e-12)


def test_capital_gains_keeps_exact_zeros_and_smooths_the_rest():
    rng = _rng(8)
    n = 5000
    x = np.where(rng.uniform(size=n) < 0.9, 0.0, rng.lognormal(8.0, 1.0, n))
    m = SmoothedMarginal(x, lower=0.0)
    assert np.array_equal(m.atoms_, [0.0])
    assert m.atom_probs_[0] == pytest.approx(np.mean(x == 0.0))
    y = m.ppf(rng.uniform(size=100_000))
    assert abs(np.mean(y == 0.0) - 0.9) < 0.015
    positive = y[y != 0.0]
    assert positive.min() > 0.0
    assert not np.isin(positive, x).any()
    assert stats.ks_2samp(positive, x[x > 0]).statistic < 0.05


def test_atom_inside_the_continuous_range():
    rng = _rng(9)
    x = np.concatenate([rng.normal(0.0, 1.0, 900), np.full(100, 0.5)])
    m = SmoothedMarginal(x)
    assert np.array_equal(m.atoms_, [0.5]) and m.atom_probs_[0] == pytest.approx(0.1)
    u = rng.uniform(size=50_000)
    y = m.ppf(u)
    assert abs(np.mean(y == 0.5) - 0.1) < 0.01
    assert np.all(np.diff(y[np.argsort(u)]) >= 0)            # ppf is monotone
    assert stats.ks_2samp(y, x).statistic < 0.03
    assert m.cdf(0.5) - m.cdf(0.5 - 1e-9) == pytest.approx(0.1, abs=1e-6)


def test_fewer_than_two_non_atom_values_gives_atoms_only():
    x = np.concatenate([np.zeros(99), [5.0]])
    m = SmoothedMarginal(x, lower=0.0)
    assert m.bandwidth_ is None and m.continuous_weight_ == 0.0
    assert np.array_equal(m.atoms_, [0.0, 5.0]) and np.allclose(m.atom_probs_, [0.99, 0.01])
    y = m.ppf(_rng(10).uniform(size=10_000))
    assert set(np.unique(y)) <= {0.0, 5.0}
    assert m.ppf(0.995) == 5.0 and m.ppf(0.5) == 0.0


def test_values_outside_bounds_are_rejected():
    with pytest.raises(ValueError):
        SmoothedMarginal(np.array([-1.0, 2.0, 3.0]), lower=0.0)
    with pytest.raises(ValueError):
        EmpiricalMarginal(np.array([1.0, np.nan]))


# ---------------------------------------------------------------- state and entry point

@pytest.mark.parametrize("build", [
    lambda x: EmpiricalMarginal(np.round(x)),
    lambda x: SmoothedMarginal(x, lower=0.0),
    lambda x: SmoothedMarginal(np.where(x < 1.0, 0.0, x), lower=0.0, upper=100.0),
    lambda x: SmoothedMarginal(np.concatenate([np.zeros(99), [5.0]])),
    lambda x: SmoothedMarginal(x, lower=0.0, scale="log"),
])
def test_state_round_trip_gives_identical_outputs(build):
    rng = _rng(11)
    m = build(rng.lognormal(0.0, 1.0, 1000))
    meta, arrays = m.to_state()
    meta = json.loads(json.dumps(meta))
    assert all(isinstance(a, np.ndarray) and a.dtype == np.float64 for a in arrays.values())
    rebuilt = marginal_from_state(meta, {k: a.copy() for k, a in arrays.items()})
    assert type(rebuilt) is type(m)
    u = rng.uniform(size=5000)
    assert np.array_equal(rebuilt.ppf(u), m.ppf(u))
    t = m.ppf(u)
    assert np.array_equal(rebuilt.cdf(t), m.cdf(t))


def test_smoothed_state_is_small():
    m = SmoothedMarginal(_rng(12).lognormal(0.0, 2.0, 50_000), lower=0.0)
    _, arrays = m.to_state()
    assert sum(a.size for a in arrays.values()) < 30_000


def test_fit_marginal_dispatches_on_kind_and_drops_nan():
    x = np.array([1.0, np.nan, 2.0, 2.0, 3.0, np.nan])
    for kind in ("binary", "ordinal", "count"):
        m = fit_marginal(x, kind)
        assert isinstance(m, EmpiricalMarginal) and m.n_ == 4
    m = fit_marginal(np.append(_rng(13).exponential(1.0, 200), np.nan), "continuous", lower=0.0)
    assert isinstance(m, SmoothedMarginal) and m.n_ == 200 and m.lower == 0.0


# ---------------------------------------------------------------- values held by one row

def test_a_value_held_by_one_row_is_never_returned_its_mass_goes_to_the_nearest():
    rng = _rng(21)
    x = np.concatenate([rng.poisson(4.0, 2000), [15.0, 19.0, 30.0]])   # the tail: one row each
    m = fit_marginal(x, "count")
    values, counts = np.unique(x, return_counts=True)
    single = values[counts == 1]
    assert set(single) >= {15.0, 19.0, 30.0}
    y = m.ppf(rng.uniform(size=400_000))
    assert not np.isin(y, single).any()
    top = values[counts >= 2].max()
    released = np.where(counts >= 2, values, np.where(values > top, top, np.nan))
    assert not np.isnan(released).any()   # (this sample's singletons all lie above its shared values)
    probs = counts / (x.size + 1)
    probs[-1] += 1 / (x.size + 1)          # u above n/(n+1) is clipped to the maximum
    shared = values[counts >= 2]
    expected = np.array([probs[released == v].sum() for v in shared])
    observed = np.array([(y == v).sum() for v in shared])
    assert observed.sum() == y.size
    assert stats.chisquare(observed, expected * y.size).pvalue > 1e-3


def test_ties_go_toward_the_median_and_all_singletons_stay():
    m = EmpiricalMarginal(np.array([0.0, 2.0, 2.0, 3.0, 4.0, 4.0, 6.0, 6.0, 8.0]), min_rows=2)
    assert list(m.released_) == [2.0, 2.0, 4.0, 4.0, 6.0, 6.0]   # 3 is as near 2 as 4: toward the median 4
    assert list(EmpiricalMarginal(np.arange(5.0), min_rows=2).released_) == list(np.arange(5.0))


def test_a_count_held_mostly_by_one_row_each_is_smoothed():
    """Whole-dollar incomes: an empirical marginal would hand out respondents' own values."""
    x = np.round(_rng(22).lognormal(10, 0.5, 800))
    assert np.unique(x).size > 0.9 * x.size
    m = fit_marginal(x, "count", lower=0.0)
    assert isinstance(m, SmoothedMarginal)
    y = np.round(m.ppf(_rng(23).uniform(size=2000)))
    assert np.isin(y, x).mean() < 0.1
