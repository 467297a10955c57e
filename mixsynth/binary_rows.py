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
from dataclasses import dataclass

import numpy as np
from scipy.special import log_ndtr

from .latent import RANK, Constraints
from .truncnorm import draw_probit

RARE_SHARE = 0.1     # a binary whose smaller group holds under this share of its observed rows
MOVES_PER_SWEEP = 2  # rare binaries moved a sweep, drawn at random (NHEFS has 21): four on
#   the paper layout gave no better a fit (max R-hat 1.053, min bulk ESS 79 in 271 s; two:
#   1.015 and 155 in 246 s; one run each, and min ESS moves between 80 and 175 run to run)
HESSIAN_ROWS = 2000  # rows of a binary's larger side its proposal's curvature is summed over:
#   a move's cost is then O(n p) + O((rare rows + 2,000) p^2), not O(n p^2); on the paper
#   layout (19,364 rows) the default fit took 246 s instead of 307
PROPOSAL_SCALE = 1.2  # the proposal's covariance: this times the inverse curvature where it starts
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
                     psi: float, rng: np.random.Generator, streams: np.ndarray) -> np.ndarray:
    """The collapsed move for MOVES_PER_SWEEP rare binaries drawn at random (all when fewer);
    Zt (p, n) in place, returns the new Omega (p, p). psi: the scale of the IW prior's (psi I);
    streams: the latent columns'."""
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
        prior = np.full(p, psi)
        prior[j] = 0.0
        probit = _Probit(Zt, alpha, j, below, above, prior, rng)
        theta = np.zeros(p)
        theta[rest], theta[j] = b / s, gam / s
        here = probit.proposal(theta)
        if here is None:
            continue
        new = here.mean + np.linalg.solve(here.chol.T, rng.standard_normal(p))
        there = probit.proposal(new)   # None: no way back, refused
        if there is None or not (math.log(rng.random()) < there.log_post - here.log_post
                                 + there.log_q(theta) - here.log_q(new)):
            continue
        coef = s * new
        coef[j] = 0.0
        cut = s * new[j]
        old = z.copy()
        w = np.empty(n)   # z = cut + s w, w drawn on the row's side of 0 (free where sign is 0)
        draw_probit(w, (coef @ Zt - coef @ alpha - cut) / s, probit.side, streams[j:j + 1])
        z[:] = cut + s * w
        if rng.random() * (z[above].min() - z[below].max()) > bottom - top:   # refused: the column goes back
            z[:] = old
            continue
        b_new = coef[rest]
        Omega = Omega.copy()
        Omega[rest, j] = Omega[j, rest] = O22 @ b_new
        Omega[j, j] = s2 + b_new @ O22 @ b_new
    return Omega


class _Probit:
    """The collapsed probit of binary column j given the others: P(row i's side) =
    Phi(sign_i a_i' theta) with a_i = z_i - alpha, its j-th entry -1 (theta_j: the boundary
    over s), sign -1 on ``below``, +1 on ``above``. The log posterior and its gradient sum
    over every row the binary sees (two products with Zt); the curvature, which only shapes
    the proposal, over the smaller side and HESSIAN_ROWS rows of the larger, drawn once a
    move and weighted up to the larger side's size (so both directions of a move use the same
    rows, and the Metropolis-Hastings ratio stays exact)."""

    def __init__(self, Zt, alpha, j, below, above, prior, rng):
        self.Zt, self.alpha, self.j, self.prior = Zt, alpha, j, prior
        self.side = np.full(Zt.shape[1], np.nan)
        self.side[below], self.side[above] = 0.0, 1.0
        self.sign = np.zeros(Zt.shape[1])
        self.sign[below], self.sign[above] = -1.0, 1.0
        small, large = (below, above) if below.size < above.size else (above, below)
        if large.size > HESSIAN_ROWS:
            large = rng.choice(large, HESSIAN_ROWS, replace=False)
        rows = np.concatenate([small, large])
        self.weight = np.r_[np.ones(small.size), np.full(large.size, max(below.size, above.size) / large.size)]
        self.rows = rows
        self.At = np.take(Zt, rows, axis=1)   # (p, m) C-ordered: Zt[:, rows] is not, and
        self.At -= alpha[:, None]             #   every product then costs ten times more
        self.At[j] = -1.0

    def proposal(self, theta: np.ndarray) -> "_Proposal | None":
        """The Newton proposal from theta; None where the curvature is not positive definite
        to working precision."""
        coef = theta.copy()
        coef[self.j] = 0.0
        u_all = self.sign * (coef @ self.Zt - coef @ self.alpha - theta[self.j])
        seen = self.sign != 0
        u = u_all[seen]
        log_p = log_ndtr(u)
        mills = np.zeros_like(u_all)
        mills[seen] = np.exp(-0.5 * u * u - log_p) / SQRT2PI      # phi(u) / Phi(u)
        v = self.sign * mills
        grad = self.Zt @ v - self.alpha * v.sum()
        grad[self.j] = -v.sum()
        grad -= self.prior * theta
        ur, mr = u_all[self.rows], mills[self.rows]
        H = (self.At * (self.weight * mr * (mr + ur))) @ self.At.T
        H[np.diag_indices_from(H)] += self.prior
        try:
            chol = np.linalg.cholesky(H / PROPOSAL_SCALE)
        except np.linalg.LinAlgError:
            return None
        return _Proposal(log_p.sum() - 0.5 * self.prior @ (theta * theta), theta + np.linalg.solve(H, grad), chol)


@dataclass(frozen=True)
class _Proposal:
    """At theta: the probit's log posterior f(theta) = sum_i log Phi(a_i' theta) - prior .
    theta^2 / 2, and the proposal N(theta + H^-1 grad f, PROPOSAL_SCALE H^-1) with H = -d2 f
    (summed over part of the rows: _Probit), held as the Cholesky factor of H / PROPOSAL_SCALE."""
    log_post: float
    mean: np.ndarray
    chol: np.ndarray

    def log_q(self, x: np.ndarray) -> float:
        """log proposal density of x, up to a constant shared by every proposal of this size."""
        r = self.chol.T @ (x - self.mean)
        return float(np.log(np.diag(self.chol)).sum() - 0.5 * r @ r)
