"""Synthetic rows from one posterior draw (method.md section 5), in the factor form.

For each synthetic row: draw the categorical combination from the (optionally smoothed)
empirical joint; draw (eta, z_cat) given that combination by a short Gibbs chain
(z_cat | eta are independent truncated normals on the orthants the combination fixes,
eta | z_cat is Gaussian); then z_rest = Lambda_rest eta + eps and y = F^-1(Phi(z / sd)).
Every row therefore has exactly one level per categorical variable.
"""
from dataclasses import dataclass

import numpy as np
from scipy import special

from .latent import LatentColumn, build_constraints, draw_latent
from .truncnorm import seed_streams


@dataclass(frozen=True)
class Draw:
    """One posterior draw: alpha (p,), Lambda (p, k), sigma2 (p,)."""
    alpha: np.ndarray
    Lambda: np.ndarray
    sigma2: np.ndarray


@dataclass(frozen=True)
class CategoricalJoint:
    """The observed combinations of the categorical variables.

    cells: (m, q) level codes (-1 = missing) of the m distinct combinations of q variables;
    counts: (m,) rows holding each; margins: per variable, (K + 1,) probabilities of
    missing (index 0) and each level (index 1 + code), the base of the smoothing.
    """
    cells: np.ndarray
    counts: np.ndarray
    margins: list[np.ndarray]

    @classmethod
    def from_codes(cls, codes: np.ndarray, n_levels: list[int]) -> "CategoricalJoint":
        """``codes``: (q, n) level codes with -1 for missing."""
        cells, counts = np.unique(codes.T, axis=0, return_counts=True)
        margins = [np.bincount(row + 1, minlength=k + 1) / row.size for row, k in zip(codes, n_levels)]
        return cls(cells.astype(np.int64), counts.astype(np.int64), margins)

    def sample(self, n: int, rng: np.random.Generator, prior_strength: float = 0.0,
               min_count: int = 1) -> np.ndarray:
        """(q, n) codes of n synthetic combinations.

        With the defaults, combinations are drawn with their empirical frequencies (the
        paper). ``prior_strength`` a > 0 smooths the joint as the posterior predictive of a
        Dirichlet process whose base is the product of the margins: a combination is drawn
        from the base with probability (a + r) / (N + a), where r counts the rows of
        combinations seen fewer than ``min_count`` times, which are never copied as such.
        """
        keep = self.counts >= min_count
        weights = self.counts[keep].astype(float)
        base = prior_strength + self.counts[~keep].sum()
        from_base = rng.random(n) < base / (weights.sum() + base)
        out = np.empty((len(self.margins), n), dtype=np.int64)
        n_emp = int((~from_base).sum())
        if n_emp:
            pick = rng.choice(weights.size, size=n_emp, p=weights / weights.sum())
            out[:, ~from_base] = self.cells[keep][pick].T
        for r, m in enumerate(self.margins):
            out[r, from_base] = rng.choice(m.size, size=int(from_base.sum()), p=m) - 1
        return out


def latent_rows(draw: Draw, columns: list[LatentColumn], cat_codes: np.ndarray,
                sources: list[str], seed: np.random.SeedSequence, gibbs_steps: int = 50) -> np.ndarray:
    """Standardized latent rows (p, n) for synthetic rows whose categorical codes are
    ``cat_codes`` (len(sources), n). Level columns are only used through their signs."""
    rng_seed, stream_seed = seed.spawn(2)
    rng = np.random.default_rng(rng_seed)
    n = cat_codes.shape[1]
    k = draw.Lambda.shape[1]
    eta = rng.standard_normal((n, k))
    L = np.flatnonzero([c.role == "level" for c in columns])
    if L.size:
        cons = build_constraints([columns[j] for j in L], {}, cat_codes,
                                 {s: r for r, s in enumerate(sources)})
        lam, alpha, prec = draw.Lambda[L], draw.alpha[L], 1.0 / draw.sigma2[L]
        sd = np.sqrt(draw.sigma2[L])
        PL = prec[:, None] * lam
        W = np.linalg.inv(np.eye(k) + lam.T @ PL)
        W = 0.5 * (W + W.T)
        chol = np.linalg.cholesky(W)
        streams = seed_streams(stream_seed, L.size)
        Zl = np.zeros((L.size, n))
        for _ in range(gibbs_steps):
            Ml = lam @ eta.T
            Ml += alpha[:, None]
            draw_latent(Zl, Ml, sd, cons, streams)
            eta = ((Zl - alpha[:, None]).T @ PL) @ W + rng.standard_normal((n, k)) @ chol.T
    Zt = draw.Lambda @ eta.T
    Zt += draw.alpha[:, None] + np.sqrt(draw.sigma2)[:, None] * rng.standard_normal(Zt.shape)
    scale = np.sqrt((draw.Lambda ** 2).sum(axis=1) + draw.sigma2)
    return Zt / scale[:, None]


def uniforms(z: np.ndarray) -> np.ndarray:
    """Phi(z), kept inside (0, 1)."""
    return np.clip(special.ndtr(z), 1e-12, 1.0 - 1e-12)
