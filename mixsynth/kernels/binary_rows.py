"""The compiled collapsed move of a rare binary's row of Omega (the method and the
plain-Python move that calls it: mixsynth/binary_rows.py): a Metropolis-Hastings step for the
binary's collapsed probit regression, then the binary's latent column drawn given the new
row. Latent values are on the copula's latent scale."""
import math

import numba as nb
import numpy as np

from .linalg import upper_solve
from .truncnorm import draw_probit

PROPOSAL_SCALE = 1.2  # the proposal's covariance: this times the inverse curvature where it starts
LOG_SQRT2PI = 0.5 * math.log(2.0 * math.pi)


@nb.njit(cache=True)
def move_column(Omega, Zt, alpha, j, below, above, rows, weight, psi, u, normals, state):
    """One collapsed move of rare binary column j (mixsynth/binary_rows.py's docstring):
    Omega (p, p) the current covariance, Zt (p, n) the latents (column j redrawn in place
    when the move is taken), alpha (p,); returns Omega, a new array when the move is taken.
    The collapsed probit: P(row i's side) = Phi(sign_i a_i' theta) with a_i = z_i - alpha,
    its j-th entry -1 (theta_j: the boundary over s), sign -1 on the rows ``below``, +1 on
    those ``above``; its log posterior sums over every row the binary sees, the curvature
    over ``rows`` (m,) with ``weight`` (m,); psi the scale of the IW prior's psi I. ``u`` (3,)
    uniforms (the boundary's start, the Metropolis-Hastings test, the gap's test),
    ``normals`` (p,) the proposal's noise, ``state`` (1, 8) the column's stream."""
    p, n = Zt.shape
    rest = np.empty(p - 1, np.int64)
    for k in range(p - 1):
        rest[k] = k if k < j else k + 1
    O22 = np.empty((p - 1, p - 1))
    o21 = np.empty(p - 1)
    for a in range(p - 1):
        o21[a] = Omega[rest[a], j]
        for c in range(p - 1):
            O22[a, c] = Omega[rest[a], rest[c]]
    b = np.linalg.solve(O22, o21)
    s2 = Omega[j, j] - np.dot(o21, b)
    s = math.sqrt(s2)
    z = Zt[j]
    top, bottom = _side_max(z, below), _side_min(z, above)
    prior = np.full(p, psi)
    prior[j] = 0.0
    side, sign, At = _probit_arrays(Zt, alpha, j, below, above, rows)
    theta = np.zeros(p)
    for a in range(p - 1):
        theta[rest[a]] = b[a] / s
    theta[j] = (top + (bottom - top) * u[0]) / s
    log_here, mean_here, chol_here, ok = _proposal(theta, j, Zt, alpha, sign, rows, weight, At, prior)
    if not ok:
        return Omega
    new = mean_here + upper_solve(chol_here, normals.reshape(p, 1))[:, 0]
    log_there, mean_there, chol_there, ok = _proposal(new, j, Zt, alpha, sign, rows, weight, At, prior)
    if not ok:   # no way back: refused
        return Omega
    if not math.log(u[1]) < (log_there - log_here + _log_q(chol_there, mean_there, theta)
                             - _log_q(chol_here, mean_here, new)):
        return Omega
    coef = s * new
    coef[j] = 0.0
    cut = s * new[j]
    old = z.copy()
    w = np.empty(n)   # z = cut + s w, w drawn on the row's side of 0 (free where sign is 0)
    draw_probit(w, (np.dot(coef, Zt) - np.dot(coef, alpha) - cut) / s, side, state)
    for i in range(n):
        z[i] = cut + s * w[i]
    if u[2] * (_side_min(z, above) - _side_max(z, below)) > bottom - top:   # refused: the column goes back
        z[:] = old
        return Omega
    b_new = np.empty(p - 1)
    for a in range(p - 1):
        b_new[a] = coef[rest[a]]
    o21_new = np.dot(O22, b_new)
    out = Omega.copy()
    for a in range(p - 1):
        out[rest[a], j] = out[j, rest[a]] = o21_new[a]
    out[j, j] = s2 + np.dot(b_new, o21_new)
    return out


@nb.njit(cache=True)
def _side_max(z, rows):
    """max of z (n,) over ``rows``; -inf over none."""
    top = -math.inf
    for i in rows:
        top = max(top, z[i])
    return top


@nb.njit(cache=True)
def _side_min(z, rows):
    """min of z (n,) over ``rows``; inf over none."""
    bottom = math.inf
    for i in rows:
        bottom = min(bottom, z[i])
    return bottom


@nb.njit(cache=True)
def _proposal(theta, j, Zt, alpha, sign, rows, weight, At, prior):
    """At theta: the probit's log posterior f(theta) = sum_i log Phi(a_i' theta) - prior .
    theta^2 / 2, the proposal's mean theta + H^-1 grad f and the Cholesky factor of
    H / PROPOSAL_SCALE (H = -d2 f over ``rows``); ok False where H is not positive definite
    to working precision."""
    log_post, grad, H = probit_terms(theta, j, Zt, alpha, sign, rows, weight, At, prior)
    chol = np.empty_like(H)
    ok = newton_step(H, grad, PROPOSAL_SCALE, chol)
    return log_post, theta + grad, chol, ok


@nb.njit(cache=True)
def _log_q(chol, mean, x):
    """log proposal density N(mean, (chol chol')^-1) at x, up to a constant shared by every
    proposal of this size."""
    r = np.dot(chol.T, x - mean)
    out = -0.5 * np.dot(r, r)
    for a in range(chol.shape[0]):
        out += math.log(chol[a, a])
    return out


@nb.njit(cache=True)
def _probit_arrays(Zt, alpha, j, below, above, rows):
    """side (n,): 0 below, 1 above, NaN unseen; sign (n,): -1, +1, 0; At (p, m): a_i of the
    ``rows``, C-ordered (a view Zt[:, rows] is not, and every product then costs many times
    more), its row j -1."""
    p, n = Zt.shape
    side = np.full(n, np.nan)
    sign = np.zeros(n)
    for i in below:
        side[i], sign[i] = 0.0, -1.0
    for i in above:
        side[i], sign[i] = 1.0, 1.0
    At = np.empty((p, rows.size))
    for a in range(p):
        for r in range(rows.size):
            At[a, r] = -1.0 if a == j else Zt[a, rows[r]] - alpha[a]
    return side, sign, At


@nb.njit(cache=True)
def probit_terms(theta, j, Zt, alpha, sign, rows, weight, At, prior):
    """(log posterior, gradient (p,), curvature H (p, p)) of the collapsed probit at theta
    (move_column): u_i = sign_i a_i' theta over the rows with a side, mills_i = phi(u_i) / Phi(u_i);
    H sums over ``rows`` (columns of At, (p, m)) with their ``weight``. The three products
    are BLAS calls; the rest is one pass over the rows."""
    p, n = Zt.shape
    coef = theta.copy()
    coef[j] = 0.0
    shift = theta[j] + np.dot(coef, alpha)
    u = np.dot(coef, Zt)
    v = np.zeros(n)
    mills = np.zeros(n)
    log_post = -0.5 * np.dot(prior, theta * theta)
    for i in range(n):
        if sign[i] != 0.0:
            u[i] = sign[i] * (u[i] - shift)
            log_p = log_ndtr(u[i])
            log_post += log_p
            mills[i] = math.exp(-0.5 * u[i] * u[i] - log_p - LOG_SQRT2PI)
            v[i] = sign[i] * mills[i]
        else:
            u[i] = 0.0
    grad = np.dot(Zt, v) - alpha * v.sum() - prior * theta
    grad[j] = -v.sum() - prior[j] * theta[j]
    Aw = np.empty_like(At)
    for r in range(rows.size):
        i = rows[r]
        w = weight[r] * mills[i] * (mills[i] + u[i])
        for a in range(p):
            Aw[a, r] = At[a, r] * w
    H = np.dot(Aw, At.T)
    for a in range(p):
        H[a, a] += prior[a]
    return log_post, grad, H


@nb.njit(cache=True)
def newton_step(H, grad, scale, chol):
    """The Cholesky factor of H / scale (p, p) into ``chol`` and H^-1 grad into ``grad``, both
    in place; False (nothing usable written) when H is not positive definite to working
    precision. A compiled factorization of these small matrices, without LAPACK's call cost."""
    p = H.shape[0]
    chol[:, :] = 0.0
    for a in range(p):
        for b in range(a + 1):
            acc = H[a, b] / scale
            for k in range(b):
                acc -= chol[a, k] * chol[b, k]
            if a == b:
                if not acc > 0.0:
                    return False
                chol[a, a] = math.sqrt(acc)
            else:
                chol[a, b] = acc / chol[b, b]
    root = math.sqrt(scale)   # H = (root chol)(root chol)'
    for a in range(p):        # forward: (root chol) y = grad
        acc = grad[a]
        for k in range(a):
            acc -= root * chol[a, k] * grad[k]
        grad[a] = acc / (root * chol[a, a])
    for a in range(p - 1, -1, -1):   # back: (root chol)' x = y
        acc = grad[a]
        for k in range(a + 1, p):
            acc -= root * chol[k, a] * grad[k]
        grad[a] = acc / (root * chol[a, a])
    return True


@nb.njit(cache=True)
def log_ndtr(x):
    """log Phi(x), accurate in both tails: log1p of the upper tail above 0, erfc down to
    -20, and below it the asymptotic series of the Mills ratio (terms down to 1e-17)."""
    if x > 0.0:
        return math.log1p(-0.5 * math.erfc(x / math.sqrt(2.0)))
    if x > -20.0:
        return math.log(0.5 * math.erfc(-x / math.sqrt(2.0)))
    x2 = x * x
    term, series = 1.0, 1.0
    for k in range(1, 12):
        term *= -(2.0 * k - 1.0) / x2
        series += term
    return -0.5 * x2 - math.log(-x) - LOG_SQRT2PI + math.log(series)
