"""The compiled update of the latent columns Z under the constraints the observed data put
on them (method.md 3.7), and the cut move between two large tie groups.

Latent columns are of two kinds:

* rank columns (binary, ordinal, count, continuous values, missingness indicators and the
  RL baseline's dummies): the order of z_.j must match the order of y_.j; rows sharing a
  value form one tie group, drawn together between the neighbouring groups' extremes.
  Between two groups of many rows each (``constraints.TIE_ROWS``), a cut move follows
  (``move_cut``) in a share of the sweeps: the draw alone moves their boundary by the gap
  between the groups' extremes, a sliver a sweep (O(1 / n)) against the boundary's posterior
  sd (O(1 / sqrt n)), and every correlation of the column follows it (the paper layout's
  GEST ~ PBresult, two counts in groups of thousands of rows; NHEFS's state cigarette price
  and tax);
* level columns (one per level of an unordered categorical, or one for its rare levels
  pooled): z > 0 in rows with that level, z < 0 in rows with another level.

Missing cells are unconstrained in both kinds. Every kernel takes the constraints as one
``ConstraintArrays``, built once per chain (``constraints.build_constraints``). Latent
values are on the copula's latent scale, in units of its normal; each column draws from its
own generator stream (truncnorm.py), so the draws do not depend on the threads.
"""
import math
from typing import NamedTuple

import numba as nb
import numpy as np

from .truncnorm import std_normal, truncnorm, uniform

RANK, LEVEL = 0, 1   # the two kinds of latent column
SQRT2, SQRT2PI = math.sqrt(2.0), math.sqrt(2.0 * math.pi)


class ConstraintArrays(NamedTuple):
    """Every latent column's constraints as flat arrays: the one argument the kernels take
    for them. p latent columns over n rows; every array int64 but ``kind``.

    kind: (p,) int8, RANK or LEVEL.
    order: observed rows of all rank columns, each column's rows sorted by value;
        column j's are ``order[order_ptr[j]:order_ptr[j+1]]``.
    groups: start offsets (within the column's slice of ``order``) of each tie group, with
        an end sentinel; column j's are ``groups[group_ptr[j]:group_ptr[j+1]]``.
    missing: rows with a missing value, column j's at ``missing[missing_ptr[j]:...]``.
    codes: (n_categorical, n) level codes, -1 for missing; a level column j reads row
        ``code_row[j]`` and is positive where the code equals ``code_level[j]``.
    cuts: the boundaries that get the cut move, each as the index g (within its column's
        groups) of the group below it; column j's are ``cuts[cut_ptr[j]:cut_ptr[j+1]]``.
    """
    kind: np.ndarray
    order: np.ndarray
    order_ptr: np.ndarray
    groups: np.ndarray
    group_ptr: np.ndarray
    missing: np.ndarray
    missing_ptr: np.ndarray
    codes: np.ndarray
    code_row: np.ndarray
    code_level: np.ndarray
    cuts: np.ndarray
    cut_ptr: np.ndarray


@nb.njit(cache=True, parallel=True)
def update_latent(Zt, Mt, sd, cut_now, cons, state):
    """Draw every latent cell from its truncated-normal full conditional, in place: the
    columns independent given their means (synthesis, a response's latent), in parallel.

    Zt, Mt: (p, n) latent values and their conditional means; sd: (p, 1) conditional sds,
    or (p, n) one a cell; cut_now: (p,) bool, the columns whose cut moves run; cons: the
    ConstraintArrays; state: (p, 8) generator streams, one per column.
    """
    step = 1 if sd.shape[1] > 1 else 0
    for j in nb.prange(Zt.shape[0]):
        _draw_column(Zt[j], Mt[j], sd[j], step, j, cut_now, cons, state)


@nb.njit(cache=True)
def update_latent_factor(Zt, U, alpha, prec, G, cond_prec, Lambda, cut_now, cons, state):
    """Draw every latent column from its full conditional given the other columns, with
    the factors integrated out: z_i ~ N(alpha, Omega), Omega = Lambda Lambda' + Sigma.

    Column by column (each sees the columns drawn before it), in place. With
    Q = Omega^-1 = D - D Lambda W Lambda' D (Woodbury; D = diag(prec), W = (I + Lambda' D
    Lambda)^-1), row i's conditional of column j is N(z_ij - r_ij / Q_jj, 1 / Q_jj), with
    r_ij = prec_j (z_ij - alpha_j) - prec_j G_j . u_i and u_i = Lambda' D (z_i - alpha).

    Zt (p, n); U (n, k) holds u_i and is kept current as columns change; alpha, prec (p,);
    G = Lambda W and Lambda (p, k); cond_prec (p,) = Q_jj; cut_now, cons, state as in
    update_latent. Cost O(n p k) per sweep, no (p, n) mean array.
    """
    p, n = Zt.shape
    k = U.shape[1]
    mu = np.empty(n)
    old = np.empty(n)
    for j in range(p):
        z = Zt[j]
        d = prec[j]
        a = alpha[j]
        g = G[j]
        for i in range(n):
            r = d * (z[i] - a) - d * _dot(g, U[i])
            mu[i] = z[i] - r / cond_prec[j]
            old[i] = z[i]
        _draw_and_follow(z, mu, old, cond_prec[j], j, cut_now, cons, state, U, Lambda[j], d)


@nb.njit(cache=True, fastmath={"reassoc", "contract"})
def _dot(a, b):
    """a . b for (k,) arrays, summed in SIMD lanes (the order of the sum is the compiler's)."""
    out = 0.0
    for h in range(a.size):
        out += a[h] * b[h]
    return out


@nb.njit(cache=True)
def update_latent_full(Zt, R, Q, cut_now, cons, state):
    """Draw every latent column from its full conditional given the other columns under
    z_i ~ N(alpha, Omega) with precision Q = Omega^-1 (p, p), in place: the rank columns
    one after another, then the level columns row by row.

    R (n, p) holds r_i = Q (z_i - alpha) and is kept current: row i's conditional of
    column j is N(z_ij - r_ij / Q_jj, 1 / Q_jj). Level cells constrain no other row, so
    a row's level cells are drawn together while r_i is in cache (the draws are those of
    column by column: each column has its own stream, read in row order). cut_now, cons,
    state as in update_latent. Cost O(n p^2) per sweep.
    """
    p, n = Zt.shape
    mu = np.empty(n)
    old = np.empty(n)
    for j in range(p):
        if cons.kind[j] == LEVEL:
            continue
        z = Zt[j]
        for i in range(n):
            mu[i] = z[i] - R[i, j] / Q[j, j]
            old[i] = z[i]
        _draw_and_follow(z, mu, old, Q[j, j], j, cut_now, cons, state, R, Q[j], 1.0)
    levels = np.flatnonzero(cons.kind == LEVEL)
    if levels.size:
        _levels_by_row(Zt, R, Q, levels, cons, state)


@nb.njit(cache=True)
def _draw_and_follow(z, mu, old, q, j, cut_now, cons, state, R, col, scale):
    """Draw column j (z, (n,), in place) from N(mu_i, 1 / q) under its constraints, then
    add col * scale * (z_i - old_i) to row i of R (n, m), old (n,) being z before the draw:
    the running products of the two conditional updates (U or R) follow the new column."""
    sd = np.empty(1)
    sd[0] = 1.0 / np.sqrt(q)
    _draw_column(z, mu, sd, 0, j, cut_now, cons, state)
    for i in range(z.size):
        step = scale * (z[i] - old[i])
        if step != 0.0:
            for h in range(R.shape[1]):
                R[i, h] += col[h] * step


@nb.njit(cache=True)
def _levels_by_row(Zt, R, Q, levels, cons, state):
    """The level cells of update_latent_full, row by row; ``levels`` (m,) their columns."""
    p, n = Zt.shape
    sd = np.empty(levels.size)
    for t in range(levels.size):
        sd[t] = 1.0 / np.sqrt(Q[levels[t], levels[t]])
    for i in range(n):
        r = R[i]
        for t in range(levels.size):
            j = levels[t]
            old = Zt[j, i]
            mu = old - r[j] / Q[j, j]
            c = cons.codes[cons.code_row[j], i]
            if c < 0:
                v = mu + sd[t] * std_normal(state, j)
            elif c == cons.code_level[j]:
                v = truncnorm(mu, sd[t], 0.0, np.inf, state, j)
            else:
                v = truncnorm(mu, sd[t], -np.inf, 0.0, state, j)
            Zt[j, i] = v
            step = v - old
            col = Q[j]
            for h in range(p):
                r[h] += col[h] * step


@nb.njit(cache=True)
def _draw_column(z, mu, s, step, j, cut_now, cons, state):
    """Draw latent column ``j`` (z, (n,), in place) from N(mu_i, s_i^2) under its
    constraints; row i's sd is s[i * step] (step 0: one sd for the column, 1: one a row).
    Its cut moves follow when ``cut_now[j]``."""
    order, groups = cons.order, cons.groups
    for t in range(cons.missing_ptr[j], cons.missing_ptr[j + 1]):
        i = cons.missing[t]
        z[i] = mu[i] + s[i * step] * std_normal(state, j)
    if cons.kind[j] == LEVEL:
        row = cons.codes[cons.code_row[j]]
        level = cons.code_level[j]
        for i in range(z.size):
            c = row[i]
            if c < 0:
                continue
            if c == level:
                z[i] = truncnorm(mu[i], s[i * step], 0.0, np.inf, state, j)
            else:
                z[i] = truncnorm(mu[i], s[i * step], -np.inf, 0.0, state, j)
        return
    base = cons.order_ptr[j]
    g0 = cons.group_ptr[j]
    n_groups = cons.group_ptr[j + 1] - g0 - 1
    lo = -np.inf
    for g in range(n_groups):
        a = base + groups[g0 + g]
        b = base + groups[g0 + g + 1]
        hi = np.inf
        if g + 1 < n_groups:
            c_end = base + groups[g0 + g + 2]
            for t in range(b, c_end):
                v = z[order[t]]
                if v < hi:
                    hi = v
        new_lo = -np.inf
        for t in range(a, b):
            i = order[t]
            v = truncnorm(mu[i], s[i * step], lo, hi, state, j)
            z[i] = v
            if v > new_lo:
                new_lo = v
        lo = new_lo
    if cons.cut_ptr[j + 1] > cons.cut_ptr[j] and cut_now[j]:
        keep = np.empty(3 * (cons.order_ptr[j + 1] - base))
        for t in range(cons.cut_ptr[j], cons.cut_ptr[j + 1]):
            g = cons.cuts[t]
            below = base + groups[g0 + g - 1] if g > 0 else -1
            above = base + groups[g0 + g + 3] if g + 2 < n_groups else -1
            move_cut(z, mu, s, step, j, order, below, base + groups[g0 + g], base + groups[g0 + g + 1],
                     base + groups[g0 + g + 2], above, keep, state)


@nb.njit(cache=True)
def move_cut(z, mu, s, step, j, order, below, a, b, c, above, keep, state):
    """The cut move of latent column ``j`` between its tie groups order[a:b] and order[b:c],
    in place: z (n,) its latents, mu (n,) and s their conditional means and sds (row i's sd
    s[i * step]), order (rows,) the column's rows by value; order[below:a] and order[c:above]
    are the groups around them (-1: none); ``keep`` is scratch space of at least 3 (c - a);
    state the generator streams, j's drawn from.

    Under the rank likelihood the two groups' latents must stay on their sides of each other
    and inside (lo, hi), the neighbouring groups' extremes. A boundary gam drawn uniformly in
    the gap between them augments the state exactly. Proposal: a random-walk Metropolis step
    for gam in the model where it is a free cutpoint and the two groups' latents are
    integrated out (so it moves by about a cutpoint's posterior sd, not by the gap; the step
    is s / sqrt(rows of the smaller group), half or twice that at random), then, if it moved,
    both groups' latents drawn on their sides of it. That leaves the free-cutpoint model,
    whose density is the rank likelihood's times the gap, invariant; Metropolis-Hastings
    accepts it with probability min(1, old gap / new gap), which makes the move exact for
    the rank likelihood (Cowles 1996 integrates the latents out of cutpoint moves likewise).
    """
    lo = _extreme(z, order, below, a, 1.0)
    hi = -_extreme(z, order, c, above, -1.0)
    top, bottom = _extreme(z, order, a, b, 1.0), -_extreme(z, order, b, c, -1.0)
    gap = bottom - top
    gam = top + gap * uniform(state, j)
    size = s[order[a] * step] / math.sqrt(min(b - a, c - b))
    new = gam + size * (0.5 if uniform(state, j) < 0.5 else 2.0) * std_normal(state, j)
    if not lo < new < hi:
        return
    m = c - a
    for t in range(a, c):   # the far ends' tail masses, fixed during the move
        i = order[t]
        x = ((lo if t < b else hi) - mu[i]) / s[i * step]
        keep[m + t - a] = 0.5 * math.erfc(-x / SQRT2)       # Phi(x)
        keep[2 * m + t - a] = 0.5 * math.erfc(x / SQRT2)    # 1 - Phi(x)
    ratio = _cut_density(new, mu, s, step, order, a, b, c, lo, hi, keep, m) \
        - _cut_density(gam, mu, s, step, order, a, b, c, lo, hi, keep, m)
    if not math.log(uniform(state, j)) < ratio:
        return
    new_top, new_bottom = -np.inf, np.inf
    for t in range(a, c):
        i = order[t]
        keep[t - a] = z[i]
        if t < b:
            z[i] = truncnorm(mu[i], s[i * step], lo, new, state, j)
            new_top = max(new_top, z[i])
        else:
            z[i] = truncnorm(mu[i], s[i * step], new, hi, state, j)
            new_bottom = min(new_bottom, z[i])
    if uniform(state, j) * (new_bottom - new_top) > gap:   # refused: the latents go back
        for t in range(a, c):
            z[order[t]] = keep[t - a]


@nb.njit(cache=True)
def _cut_density(gam, mu, s, step, order, a, b, c, lo, hi, tails, m):
    """log density of the boundary gam between groups order[a:b] and order[b:c], their
    latents z_i ~ N(mu_i, s_i^2) integrated out: the sum of log P(lo < z_i < gam) over the
    lower group and of log P(gam < z_i < hi) over the upper one. ``tails[m + r]`` and
    ``tails[2m + r]`` hold Phi and 1 - Phi at the far end (lo or hi) of row order[a + r]."""
    out = 0.0
    for t in range(a, c):
        i = order[t]
        x = (gam - mu[i]) / s[i * step]
        r = t - a
        if t < b:   # P(lo < z < gam), from the tail on gam's side of 0
            mass = 0.5 * math.erfc(-x / SQRT2) - tails[m + r] if x <= 0.0 else tails[2 * m + r] - 0.5 * math.erfc(x / SQRT2)
        else:       # P(gam < z < hi)
            mass = tails[m + r] - 0.5 * math.erfc(-x / SQRT2) if x <= 0.0 else 0.5 * math.erfc(x / SQRT2) - tails[2 * m + r]
        if mass > 1e-300:
            out += math.log(mass)
        elif t < b:
            out += _log_norm_mass((lo - mu[i]) / s[i * step], x)
        else:
            out += _log_norm_mass(x, (hi - mu[i]) / s[i * step])
    return out


@nb.njit(cache=True)
def _log_norm_mass(x, y):
    """log(Phi(y) - Phi(x)) for x < y, stable in both tails."""
    if x >= 0.0:
        qx, qy = 0.5 * math.erfc(x / SQRT2), 0.5 * math.erfc(y / SQRT2)
        if qx > 1e-300:
            return math.log(qx) + math.log1p(-qy / qx)
        log_qx = -0.5 * x * x - math.log(x * SQRT2PI)   # Mills' ratio, past erfc's range
        log_qy = -0.5 * y * y - math.log(y * SQRT2PI) if y < np.inf else -np.inf
        return log_qx + math.log1p(-math.exp(log_qy - log_qx))
    if y <= 0.0:
        return _log_norm_mass(-y, -x)
    return math.log1p(-0.5 * math.erfc(-x / SQRT2) - 0.5 * math.erfc(y / SQRT2))


@nb.njit(cache=True)
def _extreme(z, order, a, b, sign):
    """max of sign * z over order[a:b]; -inf when a < 0 (no group)."""
    out = -np.inf
    if a >= 0:
        for t in range(a, b):
            v = sign * z[order[t]]
            if v > out:
                out = v
    return out
