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
    """The uint64 x rotated left by k bits."""
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


@nb.njit(cache=True)
def _next(state, s):
    """The next 64-bit word of stream ``s`` of ``state`` (streams, 8), advancing it
    (xoroshiro128+: the sum of the two state words, then the state's xor-shift-rotate)."""
    s0 = state[s, 0]
    s1 = state[s, 1]
    result = s0 + s1
    s1 ^= s0
    state[s, 0] = _rotl(s0, 24) ^ s1 ^ (s1 << np.uint64(16))
    state[s, 1] = _rotl(s1, 37)
    return result


@nb.njit(cache=True)
def uniform(state, s):
    """One uniform draw in (0, 1) from stream ``s`` of ``state``; advances the stream."""
    return ((_next(state, s) >> np.uint64(11)) + 0.5) * _INV_2_53


def _ziggurat_tables():
    """Marsaglia and Tsang's 256-layer ziggurat for N(0, 1), on 52-bit integers."""
    r, v, m1 = 3.6541528853610088, 4.92867323399e-3, 2.0 ** 52
    ki = np.zeros(256, np.uint64)
    wi = np.zeros(256)
    fi = np.zeros(256)
    dn = tn = r
    q = v / math.exp(-0.5 * dn * dn)
    ki[0] = np.uint64((dn / q) * m1)
    wi[0], wi[255] = q / m1, dn / m1
    fi[0], fi[255] = 1.0, math.exp(-0.5 * dn * dn)
    for i in range(254, 0, -1):
        dn = math.sqrt(-2.0 * math.log(v / dn + math.exp(-0.5 * dn * dn)))
        ki[i + 1] = np.uint64((dn / tn) * m1)
        tn = dn
        fi[i] = math.exp(-0.5 * dn * dn)
        wi[i] = dn / m1
    return r, ki, wi, fi


_ZIG_R, _ZIG_K, _ZIG_W, _ZIG_F = _ziggurat_tables()


@nb.njit(cache=True)
def std_normal(state, s):
    """One N(0, 1) draw from stream ``s`` of ``state`` by the ziggurat (one 64-bit word on
    99% of calls)."""
    while True:
        r = _next(state, s)
        idx = r & np.uint64(0xFF)
        r >>= np.uint64(8)
        negative = (r & np.uint64(1)) != 0
        rabs = (r >> np.uint64(1)) & np.uint64(0x000FFFFFFFFFFFFF)
        x = float(rabs) * _ZIG_W[idx]
        if negative:
            x = -x
        if rabs < _ZIG_K[idx]:
            return x
        if idx == 0:
            while True:
                xx = -math.log(uniform(state, s)) / _ZIG_R
                yy = -math.log(uniform(state, s))
                if yy + yy > xx * xx:
                    return -(_ZIG_R + xx) if negative else _ZIG_R + xx
        elif (_ZIG_F[idx - 1] - _ZIG_F[idx]) * uniform(state, s) + _ZIG_F[idx] < math.exp(-0.5 * x * x):
            return x


@nb.njit(cache=True, parallel=True)
def fill_normal(out, state):
    """Fill ``out`` (n, k) with N(0, 1) draws; rows split into one block per stream."""
    n = out.shape[0]
    blocks = state.shape[0]
    for b in nb.prange(blocks):
        for i in range(b * n // blocks, (b + 1) * n // blocks):
            for h in range(out.shape[1]):
                out[i, h] = std_normal(state, b)


@nb.njit(cache=True)
def _upper_side(a, b, state, s):
    """N(0, 1) truncated to [a, b] with a >= 0, by exact rejection: near 0 a half-normal
    proposal, further out Robert's (1995) exponential proposal shifted to a with the
    optimal rate (acceptance above 0.76 at any a)."""
    if a < 0.5:
        while True:
            x = abs(std_normal(state, s))
            if a <= x <= b:
                return x
    lam = 0.5 * (a + math.sqrt(a * a + 4.0))
    while True:
        x = a - math.log(uniform(state, s)) / lam
        d2 = 0.5 * (x - lam) ** 2
        if x <= b:
            u = uniform(state, s)
            if u <= 1.0 - d2 or u <= math.exp(-d2):
                return x


@nb.njit(cache=True)
def std_truncnorm(a, b, state, s):
    """One draw of N(0, 1) truncated to [a, b] from stream ``s`` of ``state``; a may be
    -inf, b may be inf, a <= b.

    Exact rejection samplers chosen by the interval, none calling erf:
    narrow intervals (width x largest |bound| < 1) take a uniform proposal, intervals
    on one side of 0 a half-normal or exponential one, intervals around 0 a normal one.
    Every branch accepts at least about 40% of its proposals.
    """
    wide = b - a
    edge = max(abs(a), abs(b))
    if wide * edge < 1.0:
        m = 0.0 if a <= 0.0 <= b else (a if a > 0.0 else b)
        squeeze = 1.0 - 0.5 * (edge * edge - m * m)   # a lower bound of the acceptance ratio
        while True:
            x = a + wide * uniform(state, s)
            u = uniform(state, s)
            if u <= squeeze or u <= math.exp(0.5 * (m * m - x * x)):
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
    """One draw of N(mu, sd^2) truncated to [lo, hi] (mu's units) from stream ``s`` of
    ``state``: the standard one, shifted and scaled."""
    return mu + sd * std_truncnorm((lo - mu) / sd, (hi - mu) / sd, state, s)


@nb.njit(cache=True)
def draw_probit(z, mean, side, state):
    """Albert-Chib latent draws in place: z_i ~ N(mean_i, 1) truncated to (0, inf) where
    side_i = 1, (-inf, 0) where side_i = 0, untruncated where side_i is NaN (a missing
    outcome). z, mean, side: (n,); one stream (state row 0)."""
    for i in range(z.size):
        if side[i] == 1.0:
            z[i] = truncnorm(mean[i], 1.0, 0.0, math.inf, state, 0)
        elif side[i] == 0.0:
            z[i] = truncnorm(mean[i], 1.0, -math.inf, 0.0, state, 0)
        else:
            z[i] = mean[i] + std_normal(state, 0)
