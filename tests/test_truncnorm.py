"""The compiled random numbers: exact truncated normals in every branch, normals, streams."""
import numba as nb
import numpy as np
import pytest
from scipy import stats

from mixsynth.kernels.truncnorm import fill_normal, seed_streams, std_truncnorm


@nb.njit
def _draws(a, b, n, state):
    out = np.empty(n)
    for i in range(n):
        out[i] = std_truncnorm(a, b, state, 0)
    return out


@pytest.mark.parametrize("a, b", [
    (-np.inf, np.inf),   # plain normal
    (0.0, np.inf), (-np.inf, -1.0), (0.2, 1.5),   # one side of 0: half-normal proposal
    (1.0, 2.5), (6.0, np.inf), (30.0, np.inf),    # exponential proposal, far tails
    (-2.0, np.inf), (-1.2, 3.0),                  # around 0: normal proposal
    (0.3, 0.5), (-0.5, 0.4), (2.0, 2.001),        # narrow: uniform proposal
])
def test_truncated_normal_matches_scipy(a, b):
    x = _draws(a, b, 100_000, seed_streams(np.random.SeedSequence(7), 1))
    assert np.all((x >= a) & (x <= b))
    assert stats.kstest(x, stats.truncnorm(a, b).cdf).pvalue > 1e-3


def test_normal_fill_is_standard_normal_and_independent_of_threads():
    out = np.empty((50_000, 4))
    fill_normal(out, seed_streams(np.random.SeedSequence(1), 16))
    assert stats.kstest(out.ravel(), "norm").pvalue > 1e-3
    # the ziggurat's tail branch: beyond its base strip the share must match the normal's
    tail = np.mean(np.abs(out) > 3.0)
    assert abs(tail - 2 * stats.norm.sf(3.0)) < 6e-4
    nb.set_num_threads(1)
    try:
        again = np.empty_like(out)
        fill_normal(again, seed_streams(np.random.SeedSequence(1), 16))
    finally:
        nb.set_num_threads(nb.config.NUMBA_NUM_THREADS)
    assert np.array_equal(out, again)
