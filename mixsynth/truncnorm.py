"""Compiled random numbers: a per-stream xoroshiro128+ generator and truncated normals.

Every latent column owns its own generator state (a row of a ``(streams, 8)`` uint64
array, of which the first two words are the state and the rest pad the row to a cache
line so threads do not contend), so a column's draws do not depend on which thread ran
it: the same seed gives the same draws with one thread or many.
"""
import math

import numba as nb
import numpy as np

_INV_2_53 = 1.0 / 9007199254740992.0


def seed_streams(seed_sequence: np.random.SeedSequence, n_streams: int) -> np.ndarray:
    """Return generator states, shape (n_streams, 8) uint64, none all-zero."""
    state = np.zeros((n_streams, 8), dtype=np.uint64)
    state[:, :2] = seed_sequence.generate_state(2 * n_streams, dtype=np.uint64).reshape(n_streams, 2)
    state[(state[:, 0] == 0) & (state[:, 1] == 0), 0] = 1
    return state


@nb.njit(cache=True, inline="always")
def _rotl(x, k):
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


@nb.njit(cache=True)
def uniform(state, s):
    """One uniform draw in (0, 1) from stream ``s`` of ``state``; advances the stream."""
    s0 = state[s, 0]
    s1 = state[s, 1]
    result = s0 + s1
    s1 ^= s0
    state[s, 0] = _rotl(s0, 24) ^ s1 ^ (s1 << np.uint64(16))
    state[s, 1] = _rotl(s1, 37)
    return ((result >> np.uint64(11)) + 0.5) * _INV_2_53


@nb.njit(cache=True)
def std_normal(state, s):
    """One N(0, 1) draw (Marsaglia's polar method; the pair's second value is dropped)."""
    while True:
        u = 2.0 * uniform(state, s) - 1.0
        v = 2.0 * uniform(state, s) - 1.0
        r = u * u + v * v
        if 0.0 < r < 1.0:
            return u * math.sqrt(-2.0 * math.log(r) / r)


@nb.njit(cache=True)
def _upper_side(a, b, state, s):
    """N(0, 1) truncated to [a, b] with a >= 0: Robert's (1995) exponential proposal
    shifted to a with the optimal rate, exact rejection (acceptance >= 0.76 at any a)."""
    lam = 0.5 * (a + math.sqrt(a * a + 4.0))
    while True:
        x = a - math.log(uniform(state, s)) / lam
        d = x - lam
        if x <= b and uniform(state, s) <= math.exp(-0.5 * d * d):
            return x


@nb.njit(cache=True)
def std_truncnorm(a, b, state, s):
    """One draw of N(0, 1) truncated to [a, b]; a may be -inf, b may be inf, a <= b.

    Exact rejection samplers chosen by the interval, none calling erf:
    narrow intervals (width x largest |bound| < 1) take a uniform proposal, intervals
    on one side of 0 Robert's exponential proposal, intervals around 0 a normal one.
    Every branch accepts at least about half of its proposals.
    """
    wide = b - a
    if wide * max(abs(a), abs(b)) < 1.0:
        m = 0.0 if a <= 0.0 <= b else (a if a > 0.0 else b)
        while True:
            x = a + wide * uniform(state, s)
            if uniform(state, s) <= math.exp(0.5 * (m * m - x * x)):
                return x
    if a >= 0.0:
        return _upper_side(a, b, state, s)
    if b <= 0.0:
        return -_upper_side(-b, -a, state, s)
    while True:
        x = std_normal(state, s)
        if a <= x <= b:
            return x


@nb.njit(cache=True)
def truncnorm(mu, sd, lo, hi, state, s):
    """One draw of N(mu, sd^2) truncated to [lo, hi]."""
    return mu + sd * std_truncnorm((lo - mu) / sd, (hi - mu) / sd, state, s)
