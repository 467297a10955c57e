"""The collapsed move of a rare binary's row of Omega (full structure).

A rank column with two tie groups (a binary value or a missingness indicator) whose smaller
group holds under RARE_SHARE of its observed rows is informed by few rows, and plain data
augmentation crawls there: Omega | Z is as sharp as n complete rows make it, while the
latents of the rare binary carry the current correlation from one sweep to the next
(Johndrow, Smith, Pillai and Dunson 2019). This move draws the binary's row of Omega with
its latent column integrated out, then the column given the new row.

Given the other columns z_(-j) and Omega_(-j,-j), write z_ij = b'(z_i,(-j) - alpha_(-j)) + e_i,
e_i ~ N(0, s^2). Under the full structure's Omega ~ IW(nu, psi I), b | s^2, Omega_(-j,-j)
~ N(0, s^2 / psi I) (the inverse-Wishart's regression decomposition). With the binary's
boundary gam a free cutpoint, (beta, c) = (b, gam) / s is then a probit regression of the
binary on z_(-j) with prior beta ~ N(0, I / psi) and c flat; s, which the likelihood does
not see, stays (the scale move draws it). The move is a Metropolis-Hastings step whose
proposal is a Newton step from the current value with the inverse curvature as covariance
(near the mode, the normal at the mode; the curvature summed over the rarer side and a
sample of the other, which keeps the step exact since only the proposal uses it), followed by the column drawn on its sides of the
new boundary, and a second step with probability min(1, old gap / new gap) that makes the
free-cutpoint model's move exact for the rank likelihood, as the cut move's does
(latent.py, ``_move_cut``; Cowles 1996).
"""
import math

import numba as nb
import numpy as np

from .constraints import Constraints
from .kernels.linalg import upper_solve
from .kernels.truncnorm import draw_probit

RARE_SHARE = 0.1     # a binary whose smaller group holds under this share of its observed rows
MOVES_PER_SWEEP = 2  # rare binaries moved a sweep, drawn at random (NHEFS has 21): four on
#   the paper layout gave no better a fit (max R-hat 1.053, min bulk ESS 79 in 271 s; two:
#   1.015 and 155 in 246 s; one run each, and min ESS moves between 80 and 175 run to run)
HESSIAN_ROWS = 2000  # rows of a binary's larger side its proposal's curvature is summed over:
#   a move's cost is then O(n p) + O((rare rows + 2,000) p^2), not O(n p^2); on the paper
#   layout (19,364 rows) the default fit took 246 s instead of 307
PROPOSAL_SCALE = 1.2  # the proposal's covariance: this times the inverse curvature where it starts
LOG_SQRT2PI = 0.5 * math.log(2.0 * math.pi)


def rare_binaries(cons: Constraints) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """(j, rows below the boundary, rows above it) of every rare binary rank column."""
    return [(j, below, above) for j, below, above in cons.two_groups
            if min(below.size, above.size) < RARE_SHARE * (below.size + above.size)]


def move_binary_rows(Omega: np.ndarray, Zt: np.ndarray, alpha: np.ndarray, cons: Constraints,
                     psi: float, rng: np.random.Generator, streams: np.ndarray) -> np.ndarray:
    """The collapsed move for MOVES_PER_SWEEP rare binaries drawn at random (all when fewer);
    Zt (p, n) in place, returns the new Omega (p, p). psi: the scale of the IW prior's (psi I);
    streams: the latent columns'."""
    p = Zt.shape[0]
    rare = rare_binaries(cons)
    if len(rare) > MOVES_PER_SWEEP:
        rare = [rare[t] for t in rng.choice(len(rare), MOVES_PER_SWEEP, replace=False)]
    for j, below, above in rare:
        rows, weight = _curvature_rows(below, above, rng)
        Omega = move_column(Omega, Zt, alpha, j, below, above, rows, weight, psi, rng.random(3),
                            rng.standard_normal(p), streams[j:j + 1])
    return Omega


def _curvature_rows(below: np.ndarray, above: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The rows the proposal's curvature sums over, (m,), and their weights (m,): the smaller
    side and HESSIAN_ROWS rows of the larger, drawn once a move and weighted up to the larger
    side's size (so both directions of a move use the same rows, and the Metropolis-Hastings
    ratio stays exact)."""
    small, large = (below, above) if below.size < above.size else (above, below)
    if large.size > HESSIAN_ROWS:
        large = rng.choice(large, HESSIAN_ROWS, replace=False)
    weight = np.ones(small.size + large.size)
    weight[small.size:] = max(below.size, above.size) / large.size
    return np.concatenate([small, large]), weight


@nb.njit(cache=True)
def move_column(Omega, Zt, alpha, j, below, above, rows, weight, psi, u, normals, state):
    """One collapsed move of rare binary column j (module docstring): Zt (p, n) in place;
    returns Omega (p, p), a new array when the move is taken. The collapsed probit: P(row
    i's side) = Phi(sign_i a_i' theta) with a_i = z_i - alpha, its j-th entry -1 (theta_j:
    the boundary over s), sign -1 on ``below``, +1 on ``above``; its log posterior sums over
    every row the binary sees, the curvature over ``rows`` with ``weight``. ``u`` (3,)
    uniforms (the boundary's start, the Metropolis-Hastings test, the gap's test),
    ``normals`` (p,) the proposal's noise, ``state`` the column's stream."""
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
    top = -math.inf
    for i in rows:
        top = max(top, z[i])
    return top


@nb.njit(cache=True)
def _side_min(z, rows):
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
    ``rows``, C-ordered (a view Zt[:, rows] is not, and every product then costs ten times
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
