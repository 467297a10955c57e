"""The full structure's draw of Omega with a blank pattern's cells integrated out.

Missing cells are imputed by data augmentation: each sweep draws them given Omega, and
Omega given them. Where a correlation is informed by nothing but imputed cells (a column
and the indicator of its own blanks: the indicator is 1 exactly where the column is
blank) the imputed cells carry the current value into the next draw of Omega, and the
chain crawls; every correlation tied to it follows (NHEFS: the indicator shared by
birthplace and the state's cigarette prices and taxes, blank in 74 rows, sat at a
correlation with race of -0.21 in one chain and +0.16 in the other).

For latent columns B blank in exactly the same rows R, the rows outside R see B and the
other columns A, the rows in R see A only: a monotone pattern, for which the inverse-Wishart
posterior factors in closed form (Anderson 1957; Liu 1993). With Omega ~ IW(nu, psi I):

    Omega_AA ~ IW(nu - |B| + n, psi I + S_AA)           (all n rows)
    Omega_B.A ~ IW(nu + n_0, psi I + Y'Y - M'PM)         (the n_0 rows outside R)
    Beta | Omega_B.A ~ MN(M, P^-1, Omega_B.A),  P = psi I + X'X,  M = P^-1 X'Y

with X, Y the centred latents of A and B outside R, Beta = Omega_AA^-1 Omega_AB, and
Omega_B.A = Omega_BB - Omega_BA Beta. (Omega, z_B on R) is drawn jointly: Omega from this
posterior, then the cells from z_B | z_A. A Gibbs step in its own right, for each pattern in
turn; with no blanks it is the plain conjugate draw of Omega | Z.
"""
from dataclasses import dataclass

import numpy as np
from scipy.linalg import solve_triangular


@dataclass(frozen=True)
class BlankPattern:
    """Latent columns ``blank`` (B) missing in exactly the rows ``rows`` (R); ``others`` (A)
    are the remaining columns, ``seen`` the rows outside R when they are fewer than R's
    (the scatter of the rows that see B is then summed over them), else None."""
    blank: np.ndarray
    rows: np.ndarray
    others: np.ndarray
    seen: np.ndarray | None


def blank_patterns(missing: np.ndarray, missing_ptr: np.ndarray, n: int) -> list[BlankPattern]:
    """The pattern of each set of latent columns blank in exactly the same rows, from the
    Constraints' flat ``missing`` and ``missing_ptr`` over n rows; a pattern covering every
    column is left out."""
    p = missing_ptr.size - 1
    found: dict[bytes, list[int]] = {}
    for j in range(p):
        rows = missing[missing_ptr[j]:missing_ptr[j + 1]]
        if rows.size:
            found.setdefault(np.sort(rows).tobytes(), []).append(j)
    out = []
    for key, cols in found.items():
        if len(cols) < p:
            rows = np.frombuffer(key, dtype=missing.dtype).copy()
            seen = np.setdiff1d(np.arange(n), rows) if 2 * rows.size > n else None
            out.append(BlankPattern(np.array(cols), rows, np.setdiff1d(np.arange(p), cols), seen))
    return out


def draw_omega(Zt: np.ndarray, alpha: np.ndarray, patterns: list[BlankPattern], nu: float, psi: float,
               rng: np.random.Generator) -> np.ndarray:
    """Omega (p, p) from its conditional given Zt (p, n) and alpha (p,) with each pattern's
    cells integrated out in turn, each pattern's cells of Zt redrawn in place given it.
    Omega_AA is drawn for the last pattern only: the cells do not depend on it, and each
    pattern's Omega is replaced by the next one's."""
    p, n = Zt.shape
    Zc = Zt - alpha[:, None]
    S = Zc @ Zc.T
    if not patterns:
        return _inverse_wishart(nu + n, psi * np.eye(p) + S, rng)
    for pat in patterns:
        A, B, R = pat.others, pat.blank, pat.rows
        XR = Zc[np.ix_(A, R)]
        if pat.seen is None:
            YR = Zc[np.ix_(B, R)]
            XX = S[np.ix_(A, A)] - XR @ XR.T
            XY = S[np.ix_(A, B)] - XR @ YR.T
            YY = S[np.ix_(B, B)] - YR @ YR.T
        else:
            XS, YS = Zc[np.ix_(A, pat.seen)], Zc[np.ix_(B, pat.seen)]
            XX, XY, YY = XS @ XS.T, XS @ YS.T, YS @ YS.T
        XX[np.diag_indices_from(XX)] += psi
        L = np.linalg.cholesky(XX)                                       # P = psi I + X'X = L L'
        LiXY = solve_triangular(L, XY, lower=True)
        O_BA = _inverse_wishart(nu + n - R.size, psi * np.eye(B.size) + YY - LiXY.T @ LiXY, rng)
        V = np.linalg.cholesky(O_BA)
        Beta = solve_triangular(L, LiXY + rng.standard_normal((A.size, B.size)) @ V.T, lower=True, trans=1)
        cells = Beta.T @ XR + V @ rng.standard_normal((B.size, R.size))   # (b, r), centred
        Zt[np.ix_(B, R)] = cells + alpha[B, None]
        Zc[np.ix_(B, R)] = cells
        S[np.ix_(A, B)] = XY + XR @ cells.T
        S[np.ix_(B, A)] = S[np.ix_(A, B)].T
        S[np.ix_(B, B)] = YY + cells @ cells.T
    O_AA = _inverse_wishart(nu - B.size + n, psi * np.eye(A.size) + S[np.ix_(A, A)], rng)
    Omega = np.empty((p, p))
    Omega[np.ix_(A, A)] = O_AA
    Omega[np.ix_(A, B)] = O_AA @ Beta
    Omega[np.ix_(B, A)] = Omega[np.ix_(A, B)].T
    Omega[np.ix_(B, B)] = O_BA + Beta.T @ O_AA @ Beta
    return 0.5 * (Omega + Omega.T)


def _inverse_wishart(df: float, scale: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One draw of IW(df, scale), (q, q), by Bartlett's decomposition of its inverse."""
    q = scale.shape[0]
    bartlett = np.tril(rng.standard_normal((q, q)), -1)
    bartlett[np.diag_indices(q)] = np.sqrt(rng.chisquare(df - np.arange(q)))
    factor = np.linalg.cholesky(np.linalg.inv(0.5 * (scale + scale.T))) @ bartlett
    out = np.linalg.inv(factor @ factor.T)
    return 0.5 * (out + out.T)
