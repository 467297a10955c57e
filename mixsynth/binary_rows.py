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
not see, stays (the scale move draws it). The move is an independence Metropolis-Hastings
step from the normal at that probit's posterior mode (Newton), followed by the column drawn
on its sides of the new boundary, and a second step with probability min(1, old gap / new
gap) that makes the free-cutpoint model's move exact for the rank likelihood, as the cut
move's does (latent.py, ``_move_cut``; Cowles 1996).
"""
import math

import numba as nb
import numpy as np
from scipy.special import log_ndtr

from .latent import RANK, Constraints
from .truncnorm import std_normal, truncnorm

RARE_SHARE = 0.1     # a binary whose smaller group holds under this share of its observed rows
MOVES_PER_SWEEP = 2  # rare binaries moved a sweep, drawn at random: a move costs about a third
#   of a sweep (Newton's steps are O(n p^2) as the sweep is), and NHEFS has 21 rare binaries
PROPOSAL_SCALE = 1.2  # the proposal's covariance: this times the inverse curvature at the mode
NEWTON_STEPS = 30
SQRT2PI = math.sqrt(2.0 * math.pi)


def rare_binaries(cons: Constraints) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """(j, rows below the boundary, rows above it) of every rare binary rank column."""
    out = []
    for j in np.flatnonzero(cons.kind == RANK):
        starts = cons.groups[cons.group_ptr[j]:cons.group_ptr[j + 1]]
        if starts.size != 3:
            continue
        rows = cons.order[cons.order_ptr[j]:cons.order_ptr[j + 1]]
        if min(starts[1], rows.size - starts[1]) < RARE_SHARE * rows.size:
            out.append((int(j), rows[:starts[1]], rows[starts[1]:]))
    return out


def move_binary_rows(Omega: np.ndarray, Zt: np.ndarray, alpha: np.ndarray, cons: Constraints,
                     psi: float, rng: np.random.Generator, streams: np.ndarray,
                     modes: dict | None = None) -> np.ndarray:
    """The collapsed move for MOVES_PER_SWEEP rare binaries drawn at random (all when fewer);
    Zt (p, n) in place, returns the new Omega (p, p). psi: the scale of the IW prior's (psi I); streams: the latent columns';
    modes: column -> the last probit mode, where Newton's method starts (kept current)."""
    modes = {} if modes is None else modes
    p, n = Zt.shape
    rare = rare_binaries(cons)
    if len(rare) > MOVES_PER_SWEEP:
        rare = [rare[t] for t in rng.choice(len(rare), MOVES_PER_SWEEP, replace=False)]
    for j, below, above in rare:
        rest = np.r_[0:j, j + 1:p]
        O22 = Omega[np.ix_(rest, rest)]
        b = np.linalg.solve(O22, Omega[rest, j])
        s2 = Omega[j, j] - Omega[rest, j] @ b
        s = math.sqrt(s2)
        z = Zt[j]
        top, bottom = z[below].max(), z[above].min()
        gam = top + (bottom - top) * rng.random()
        sign = np.zeros(n)
        sign[below], sign[above] = -1.0, 1.0
        seen = np.flatnonzero(sign)
        At = Zt[:, seen] - alpha[:, None]     # (p, m) signed design: P(y_i) = Phi(a_i' theta),
        At[j] = -1.0                          #   theta = (b / s with the boundary / s at j)
        At *= sign[seen]
        prior = np.full(p, psi)
        prior[j] = 0.0
        theta = np.zeros(p)
        theta[rest], theta[j] = b / s, gam / s
        mode, H = _probit_mode(At, modes.get(j, theta), prior)
        if mode is None:
            continue
        modes[j] = mode
        chol = np.linalg.cholesky(H / PROPOSAL_SCALE)
        new = mode + np.linalg.solve(chol.T, rng.standard_normal(p))

        def log_ratio(t):   # log posterior minus log proposal, up to constants
            r = chol.T @ (t - mode)
            return log_ndtr(t @ At).sum() - 0.5 * prior @ (t * t) + 0.5 * r @ r

        if not math.log(rng.random()) < log_ratio(new) - log_ratio(theta):
            continue
        coef = s * new
        coef[j] = 0.0
        old = z.copy()
        missing = cons.missing[cons.missing_ptr[j]:cons.missing_ptr[j + 1]]
        new_gap = _draw_binary(z, coef @ Zt - coef @ alpha, s, below, above, missing, s * new[j], streams, j)
        if rng.random() * new_gap > bottom - top:   # refused: the column goes back
            z[:] = old
            continue
        b_new = coef[rest]
        Omega = Omega.copy()
        Omega[rest, j] = Omega[j, rest] = O22 @ b_new
        Omega[j, j] = s2 + b_new @ O22 @ b_new
    return Omega


def _probit_mode(At: np.ndarray, theta: np.ndarray, prior: np.ndarray):
    """Mode and curvature (negative Hessian) of f(theta) = sum_i log Phi(a_i' theta) -
    prior . theta^2 / 2 (At: (p, m), the a_i as columns), by Newton's method from ``theta``
    with step halving until f does not drop, which converges from any start since f is
    concave; (None, None) if it has not after NEWTON_STEPS. Converged, the mode is the same
    from any start, so the proposal does not depend on the current value."""
    u = theta @ At
    log_p = log_ndtr(u)
    f = log_p.sum() - 0.5 * prior @ (theta * theta)
    for _ in range(NEWTON_STEPS):
        mills = np.exp(-0.5 * u * u - log_p) / SQRT2PI      # phi(u) / Phi(u)
        H = (At * (mills * (mills + u))) @ At.T
        H[np.diag_indices_from(H)] += prior
        step = np.linalg.solve(H, At @ mills - prior * theta)
        while True:
            new = theta + step
            u = new @ At
            log_p = log_ndtr(u)
            f_new = log_p.sum() - 0.5 * prior @ (new * new)
            if f_new >= f or np.abs(step).max() < 1e-12:
                break
            step = 0.5 * step
        theta, f = new, f_new
        if np.abs(step).max() < 1e-9:   # H is the curvature at the mode to that precision
            return theta, H
    return None, None


@nb.njit(cache=True)
def _draw_binary(z, mu, s, below, above, missing, gam, streams, j):
    """z (n,) in place: N(mu_i, s^2) below gam on ``below``, above it on ``above``, free on
    ``missing``, from stream j; returns the new gap between the two groups."""
    top, bottom = -np.inf, np.inf
    for i in below:
        z[i] = truncnorm(mu[i], s, -np.inf, gam, streams, j)
        top = max(top, z[i])
    for i in above:
        z[i] = truncnorm(mu[i], s, gam, np.inf, streams, j)
        bottom = min(bottom, z[i])
    for i in missing:
        z[i] = mu[i] + s * std_normal(streams, j)
    return bottom - top
