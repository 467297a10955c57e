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
sample of the other, which keeps the step exact since only the proposal uses it), followed
by the column drawn on its sides of the new boundary, and a second step with probability
min(1, old gap / new gap) that makes the free-cutpoint model's move exact for the rank
likelihood, as the cut move's does (kernels/latent.py, ``move_cut``; Cowles 1996).

Here the rare binaries are chosen and the move's random parts drawn from the chain's
generator; the move itself is compiled (kernels/binary_rows.py).
"""
import numpy as np

from .constraints import Constraints
from .kernels.binary_rows import move_column

RARE_SHARE = 0.1     # a binary whose smaller group holds under this share of its observed rows
MOVES_PER_SWEEP = 2  # rare binaries moved a sweep, drawn at random (NHEFS has 21): four on
#   the paper layout gave no better a fit, for more time a sweep
HESSIAN_ROWS = 2000  # rows of a binary's larger side its proposal's curvature is summed over:
#   a move's cost is then O(n p) + O((rare rows + 2,000) p^2), not O(n p^2)


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
