"""The full structure's draw of Omega with a blank pattern's cells integrated out.

Missing cells are imputed by data augmentation: each sweep draws them given Omega, and
Omega given them. Where a correlation is informed by nothing but imputed cells (a column
and the indicator of its own blanks: the indicator is 1 exactly where the column is
blank) the imputed cells carry the current value into the next draw of Omega, and the
chain crawls; every correlation tied to it follows (NHEFS: the indicator shared by
birthplace and the state's cigarette prices and taxes sat at a negative correlation with
race in one chain and a positive one in the other).

For latent columns B blank in exactly the same rows R, the rows outside R see B and the
other columns A, the rows in R see A only: a monotone pattern, for which the inverse-Wishart
posterior factors in closed form (Anderson 1957; Liu 1993). With Omega ~ IW(nu, psi I):

    Omega_AA ~ IW(nu - |B| + n, psi I + S_AA)           (all n rows)
    Omega_B.A ~ IW(nu + n_0, psi I + Y'Y - M'PM)         (the n_0 rows outside R)
    Beta | Omega_B.A ~ MN(M, P^-1, Omega_B.A),  P = psi I + X'X,  M = P^-1 X'Y

with X, Y the centred latents of A and B outside R, Beta = Omega_AA^-1 Omega_AB, and
Omega_B.A = Omega_BB - Omega_BA Beta. (Omega, z_B on R) is drawn jointly: Omega from this
posterior, then the cells from z_B | z_A. A Gibbs step in its own right, for each pattern in
turn; with no blanks it is the plain conjugate draw of Omega | Z. Here the patterns are
found and the random numbers drawn from the chain's generator; the patterns' loop is
compiled (kernels/blank_cells.py).
"""
import numpy as np

from .kernels.blank_cells import BlankPatterns, assemble, draw_patterns
from .kernels.linalg import inverse_wishart_from


def blank_patterns(missing: np.ndarray, missing_ptr: np.ndarray, n: int) -> BlankPatterns:
    """The patterns of the constraints' flat ``missing`` and ``missing_ptr`` over n rows
    (kernels/latent.py, ConstraintArrays); a pattern covering every column is left out."""
    p = missing_ptr.size - 1
    found: dict[bytes, list[int]] = {}
    for j in range(p):
        rows = missing[missing_ptr[j]:missing_ptr[j + 1]]
        if rows.size:
            found.setdefault(np.sort(rows).tobytes(), []).append(j)
    perm, blank, rows, side, subtract = [], [], [], [], []
    for key, cols in found.items():
        if len(cols) < p:
            r = np.frombuffer(key, dtype=missing.dtype).astype(np.int64)
            perm.append(np.r_[np.setdiff1d(np.arange(p), cols), cols])
            blank.append(len(cols))
            rows.append(r)
            subtract.append(2 * r.size <= n)
            side.append(r if subtract[-1] else np.setdiff1d(np.arange(n), r))

    def flat(parts):
        return (np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64),
                np.cumsum([0] + [x.size for x in parts]).astype(np.int64))
    (rows_flat, rows_ptr), (side_flat, side_ptr) = flat(rows), flat(side)
    return BlankPatterns(np.array(perm, dtype=np.int64).reshape(len(perm), p), np.array(blank, dtype=np.int64),
                         rows_flat, rows_ptr, side_flat, side_ptr, np.array(subtract, dtype=np.bool_))


def draw_omega(Zt: np.ndarray, alpha: np.ndarray, patterns: BlankPatterns, nu: float, psi: float,
               rng: np.random.Generator) -> np.ndarray:
    """Omega (p, p) from its conditional given Zt (p, n, C-ordered) and alpha (p,) with each
    pattern's cells integrated out in turn, each pattern's cells of Zt redrawn in place given
    it. Omega_AA is drawn for the last pattern only: the cells do not depend on it, and each
    pattern's Omega is replaced by the next one's."""
    p, n = Zt.shape
    Zc = Zt - alpha[:, None]
    S = Zc @ Zc.T
    if not patterns.size:
        return _inverse_wishart(nu + n, psi * np.eye(p) + S, rng)
    b, r = patterns.blank, np.diff(patterns.rows_ptr)
    normals = rng.standard_normal(int(np.sum((p - b) * b + b * b + b * r)))
    chis = rng.chisquare(np.concatenate([nu + n - r[t] - np.arange(b[t]) for t in range(patterns.size)]))
    Beta, O_BA = draw_patterns(Zt, Zc, S, alpha, psi, patterns, normals, chis)
    order = patterns.perm[-1]
    a = p - b[-1]
    S_AA = S[order[:a]][:, order[:a]]
    O_AA = _inverse_wishart(nu - b[-1] + n, psi * np.eye(a) + S_AA, rng)
    return assemble(O_AA, Beta, O_BA, order)


def _inverse_wishart(df: float, scale: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One draw of IW(df, scale), (q, q), by Bartlett's decomposition of its inverse."""
    q = scale.shape[0]
    return inverse_wishart_from(scale, rng.standard_normal((q, q)), rng.chisquare(df - np.arange(q)))
