"""The Gibbs moves of one sweep of the copula's MCMC, for its two covariance structures.

z_i ~ N(alpha, Omega) on the latent scale; alpha_j is free for level columns and 0 otherwise.

* Factor structure (k < p, method.md section 3): Omega = Lambda Lambda' + Sigma with the
  multiplicative gamma process prior on Lambda (Bhattacharya and Dunson 2011). The latent
  columns are drawn with the factors integrated out (Woodbury keeps it O(n p k)), then
  the factors given Z, then Lambda, Sigma, the shrinkage and alpha.
* Full structure (k = p, Hoff 2007, sbgcop): Omega ~ inverse-Wishart(p + 2 + m, (1 + m) I),
  drawn whole from its conjugate conditional; m = 0.25 sqrt(n) rows' worth of independent
  latents (``Prior.pseudo_rows``; sbgcop's IW(p + 2, I) is m = 0). Its pull on a correlation
  the data fix is about m / n, a sixth of a posterior sd at any n for rho = 0.5, while it
  bounds how far the ones they barely fix wander (two categoricals' levels, whose latents the
  data augmentation imputes): on the KDD census extract it brought the R-hat of C down and
  its bulk ESS up.
  Omega is stored as Lambda Lambda' + s I with Lambda (p, p), so both structures hand
  synthesis the same kind of draw. A sweep starts with the collapsed move of rare
  binaries' rows of Omega (binary_rows.py) and draws Omega with the cells of each blank
  pattern integrated out (blank_cells.py).

Both end with a scale move per latent column (Liu and Sabatti 2000): rank and level
likelihoods do not see a column's scale, so (z_.j, row and column j of Omega, alpha_j)
are rescaled by a factor drawn from its conditional, which only the priors shape.

Every function updates the ChainState in place; random numbers come from the generators
passed in, so a chain is reproducible from its seeds. The loops over rows and columns are
compiled (kernels/: the Z updates in latent.py, the scale move's steps in gig.py).
"""
from dataclasses import dataclass

import numpy as np
from scipy import linalg

from .binary_rows import move_binary_rows
from .blank_cells import draw_omega
from .config import Prior
from .constraints import Constraints
from .kernels.gig import gig_steps
from .kernels.latent import update_latent_factor, update_latent_full
from .kernels.truncnorm import fill_normal

CUT_SHARE = 0.25  # a column's cut moves run in this share of the sweeps: on the paper layout
#   this share mixed nearly as well as every sweep, at a fraction of the added time


@dataclass
class ChainState:
    """Current values of one chain. Zt (p, n) is confidential and never leaves the chain."""
    Zt: np.ndarray
    etaT: np.ndarray     # (k, n) factors, transposed so every product is contiguous; (0, n) when full
    Lambda: np.ndarray   # (p, k)
    prec: np.ndarray     # (p,) sigma_j^-2
    phi: np.ndarray      # (p, k) local shrinkage; (p, 0) when full
    delta: np.ndarray    # (k,) global shrinkage; (0,) when full
    alpha: np.ndarray    # (p,)

    @property
    def omega(self) -> np.ndarray:
        """Omega = Lambda Lambda' + diag(sigma^2), (p, p)."""
        out = self.Lambda @ self.Lambda.T
        out[np.diag_indices_from(out)] += 1.0 / self.prec
        return out


def factor_sweep(st: ChainState, cons: Constraints, intercept: np.ndarray, prior: Prior,
                 rng: np.random.Generator, streams: np.ndarray, noise_streams: np.ndarray) -> None:
    """One sweep of the factor structure: Z | Omega, eta | Z, scale moves, Lambda, Sigma,
    phi, delta, alpha. ``streams`` (p, 8) drive the latent columns, ``noise_streams`` eta."""
    p, n = st.Zt.shape
    k = st.etaT.shape[0]
    PL = st.prec[:, None] * st.Lambda                            # D Lambda, (p, k)
    W = np.linalg.inv(np.eye(k) + st.Lambda.T @ PL)
    W = 0.5 * (W + W.T)
    G = st.Lambda @ W                                            # (p, k)
    cond_prec = st.prec - st.prec ** 2 * np.einsum("jh,jh->j", st.Lambda, G)
    U = np.ascontiguousarray((PL.T @ st.Zt).T)                   # u_i = Lambda' D (z_i - alpha), (n, k)
    U -= st.alpha @ PL
    update_latent_factor(st.Zt, U, st.alpha, st.prec, G, cond_prec, st.Lambda, _cut_now(cons, rng),
                         cons.arrays, streams)
    fill_normal(st.etaT, noise_streams)
    st.etaT = np.linalg.cholesky(W) @ st.etaT
    st.etaT += W @ U.T

    tau = np.cumprod(st.delta)
    psi = (st.phi * tau * st.Lambda ** 2).sum(axis=1) + np.where(intercept, st.alpha ** 2 / prior.alpha_var, 0.0)
    _rescale(st, gig_move(0.5 * (k + intercept) - prior.a_sigma, psi, 2.0 * prior.b_sigma * st.prec, rng))

    z_sum = st.Zt.sum(axis=1)                                    # (p,)
    EtE = st.etaT @ st.etaT.T
    B = st.Zt @ st.etaT.T - np.outer(st.alpha, st.etaT.sum(axis=1))   # (Z - alpha) eta', (p, k)
    Q = st.prec[:, None, None] * EtE                             # (p, k, k)
    Q[:, np.arange(k), np.arange(k)] += st.phi * tau
    st.Lambda = _gaussian_rows(np.linalg.cholesky(Q), st.prec[:, None] * B, rng.standard_normal((p, k)))

    zz = np.einsum("ji,ji->j", st.Zt, st.Zt) - 2.0 * st.alpha * z_sum + n * st.alpha ** 2
    ss = zz - 2.0 * np.einsum("jh,jh->j", st.Lambda, B) + np.einsum("jh,hl,jl->j", st.Lambda, EtE, st.Lambda)
    st.prec = rng.gamma(prior.a_sigma + 0.5 * n, 1.0 / (prior.b_sigma + 0.5 * np.maximum(ss, 0.0)))

    lam2 = st.Lambda ** 2
    st.phi = rng.gamma(0.5 * (prior.nu + 1.0), 1.0 / (0.5 * (prior.nu + tau * lam2)))
    col_ss = (st.phi * lam2).sum(axis=0)                         # (k,)
    for h in range(k):
        tau_wo = np.cumprod(st.delta)[h:] / st.delta[h]
        shape = (prior.a1 if h == 0 else prior.a2) + 0.5 * p * (k - h)
        st.delta[h] = rng.gamma(shape, 1.0 / (1.0 + 0.5 * tau_wo @ col_ss[h:]))

    s = 1.0 / (n * st.prec + 1.0 / prior.alpha_var)
    total = z_sum - st.Lambda @ st.etaT.sum(axis=1)
    draw = s * st.prec * total + np.sqrt(s) * rng.standard_normal(p)
    st.alpha = np.where(intercept, draw, 0.0)


def full_sweep(st: ChainState, cons: Constraints, intercept: np.ndarray, prior: Prior,
               rng: np.random.Generator, streams: np.ndarray) -> None:
    """One sweep of the full structure: rare binaries' rows; Z | Omega, alpha; scale moves;
    alpha | Z, Omega; Omega | Z, alpha ~ IW(p + 2 + m + n, (1 + m) I + sum_i (z_i - alpha)
    (z_i - alpha)'), with each blank pattern's cells integrated out in turn (blank_cells.py)."""
    p, n = st.Zt.shape
    m = prior.omega_weight(n)
    nu0, scale0 = p + 2.0 + m, 1.0 + m
    Omega = move_binary_rows(st.omega, st.Zt, st.alpha, cons, scale0, rng, streams)
    Q = _sym(np.linalg.inv(Omega))
    R = np.ascontiguousarray((st.Zt - st.alpha[:, None]).T @ Q)  # r_i = Q (z_i - alpha), (n, p)
    update_latent_full(st.Zt, R, Q, _cut_now(cons, rng), cons.arrays, streams)

    u = np.where(intercept,
                 gig_move(0.5 * (1.0 - nu0) + np.zeros(p), st.alpha ** 2 / prior.alpha_var, scale0 * np.diag(Q), rng),
                 0.5 * scale0 * np.diag(Q) / rng.gamma(0.5 * nu0, 1.0, size=p))
    _rescale(st, u)
    g = np.sqrt(u)
    Q = Q / g[:, None] / g[None, :]

    levels = np.flatnonzero(intercept)
    if levels.size:
        base = np.where(intercept, 0.0, st.alpha)
        P = n * Q[np.ix_(levels, levels)] + np.eye(levels.size) / prior.alpha_var
        b = (Q @ (st.Zt.sum(axis=1) - n * base))[levels]
        chol = np.linalg.cholesky(P)
        st.alpha[levels] = np.linalg.solve(P, b) + np.linalg.solve(chol.T, rng.standard_normal(levels.size))

    Omega = draw_omega(st.Zt, st.alpha, cons.blank_patterns, nu0, scale0, rng)
    s = 0.5 * np.linalg.eigvalsh(Omega)[0]
    st.Lambda = np.linalg.cholesky(Omega - s * np.eye(p))
    st.prec = np.full(p, 1.0 / s)


def _cut_now(cons: Constraints, rng: np.random.Generator) -> np.ndarray:
    """(p,) bool: the columns whose cut moves run this sweep, a share CUT_SHARE drawn at random."""
    if not cons.arrays.cuts.size:
        return np.zeros(cons.kind.size, dtype=np.bool_)
    return rng.random(cons.kind.size) < CUT_SHARE


def _rescale(st: ChainState, u: np.ndarray) -> None:
    """Scale latent column j, its intercept and row j of Lambda by g_j = sqrt(u_j) and
    sigma_j^2 by u_j: Omega becomes D Omega D with D = diag(g), in both structures."""
    g = np.sqrt(u)
    st.Zt *= g[:, None]
    st.alpha *= g
    st.Lambda *= g[:, None]
    st.prec /= u


def gig_move(p: np.ndarray, psi: np.ndarray, chi: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One independence Metropolis-Hastings step per entry for u ~ GIG(p, psi, chi), density
    u^(p-1) exp(-(psi u + chi / u) / 2), from the current value u = 1 (the move is relative:
    u = 1 leaves the column as it is). In v = log u the target is log-concave; the proposal is
    normal at its mode with 1.5 times the inverse curvature, so nearly every step is taken."""
    return gig_steps(p, psi, chi, rng.standard_normal(p.size), rng.uniform(size=p.size))


def _gaussian_rows(L: np.ndarray, b: np.ndarray, e: np.ndarray) -> np.ndarray:
    """(p, k) rows x_j ~ N(Q_j^-1 b_j, Q_j^-1), Q_j = L_j L_j' (L (p, k, k) lower Cholesky
    factors, b and the standard normals e (p, k)): x_j = L_j'^-1 (L_j^-1 b_j + e_j), two
    triangular solves a row (a batched LU solve of Q took 15 of a sweep's 105 ms on the
    whole KDD file's 153 x 92 Lambda)."""
    out = np.empty_like(b)
    for j in range(b.shape[0]):
        y = linalg.solve_triangular(L[j], b[j], lower=True, check_finite=False)
        out[j] = linalg.solve_triangular(L[j], y + e[j], lower=True, trans="T", check_finite=False)
    return out


def _sym(a: np.ndarray) -> np.ndarray:
    return 0.5 * (a + a.T)
