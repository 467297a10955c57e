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
turn; with no blanks it is the plain conjugate draw of Omega | Z. The patterns' loop is
compiled (numba), its random numbers drawn beforehand from the chain's generator.
"""
from dataclasses import dataclass

import numba as nb
import numpy as np


@dataclass(frozen=True)
class BlankPatterns:
    """Every set of latent columns blank in exactly the same rows, as flat arrays.

    perm: (m, p) int64, pattern t's columns with the others (A) first and its blank ones
        (B) last; blank: (m,) |B|;
    rows: the blank rows R, pattern t's at ``rows[rows_ptr[t]:rows_ptr[t + 1]]``;
    side: the rows the scatter of the rows that see B is summed over, pattern t's at
        ``side[side_ptr[t]:side_ptr[t + 1]]``: R (``subtract[t]``: the scatter is the total
        less theirs) or the rows outside R, whichever are fewer.
    """
    perm: np.ndarray
    blank: np.ndarray
    rows: np.ndarray
    rows_ptr: np.ndarray
    side: np.ndarray
    side_ptr: np.ndarray
    subtract: np.ndarray

    @property
    def size(self) -> int:
        return int(self.blank.size)

    def rows_of(self, t: int) -> np.ndarray:
        return self.rows[self.rows_ptr[t]:self.rows_ptr[t + 1]]


def blank_patterns(missing: np.ndarray, missing_ptr: np.ndarray, n: int) -> BlankPatterns:
    """The patterns of the Constraints' flat ``missing`` and ``missing_ptr`` over n rows; a
    pattern covering every column is left out."""
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
    Beta, O_BA = _draw_patterns(Zt, Zc, S, alpha, psi, patterns.perm, patterns.blank, patterns.rows,
                                patterns.rows_ptr, patterns.side, patterns.side_ptr, patterns.subtract, normals, chis)
    order = patterns.perm[-1]
    a = p - b[-1]
    S_AA = S[order[:a]][:, order[:a]]
    O_AA = _inverse_wishart(nu - b[-1] + n, psi * np.eye(a) + S_AA, rng)
    return _assemble(O_AA, Beta, O_BA, order)


@nb.njit(cache=True)
def _assemble(O_AA, Beta, O_BA, order):
    """Omega (p, p) from its blocks in pattern order (A: the first a of ``order``, B the
    rest): Omega_AA, Omega_AB = Omega_AA Beta, Omega_BB = Omega_B.A + Beta' Omega_AA Beta;
    symmetrized."""
    a, p = O_AA.shape[0], order.size
    AB = O_AA @ Beta
    BB = O_BA + Beta.T @ AB
    block = np.empty((p, p))
    block[:a, :a] = O_AA
    block[:a, a:] = AB
    block[a:, :a] = AB.T
    block[a:, a:] = BB
    Omega = np.empty((p, p))
    for i in range(p):
        for k in range(p):
            Omega[order[i], order[k]] = 0.5 * (block[i, k] + block[k, i])
    return Omega


@nb.njit(cache=True)
def _draw_patterns(Zt, Zc, S, alpha, psi, perm, blank, rows, rows_ptr, side, side_ptr, subtract, normals, chis):
    """The patterns' loop of draw_omega: Zt, Zc (p, n) and S = Zc Zc' (p, p) updated in place
    with each pattern's new cells; returns the last pattern's Beta (a, b) and Omega_B.A (b, b).
    In pattern order (A, B), the Cholesky factor L of psi I + the seen rows' scatter holds
    P = L_AA L_AA', L_BA = (L_AA^-1 X'Y)' and the residual scale L_BB L_BB'; Omega_B.A ~
    IW(df, L_BB L_BB') is L_BB G^-T G^-1 L_BB' with G a Bartlett factor (chis: its squared
    diagonal, df = nu + n - |R| - i)."""
    p, n = Zc.shape
    u, c = 0, 0   # next unused normal and chi-square
    Beta = np.zeros((0, 0))
    O_BA = np.zeros((0, 0))
    for t in range(blank.size):
        b = blank[t]
        a = p - b
        order = perm[t]
        R = rows[rows_ptr[t]:rows_ptr[t + 1]]
        rows_side = side[side_ptr[t]:side_ptr[t + 1]]
        Zs = np.empty((p, rows_side.size))
        for i in range(p):
            for k in range(rows_side.size):
                Zs[i, k] = Zc[order[i], rows_side[k]]
        T = Zs @ Zs.T
        if subtract[t]:
            for i in range(p):
                for j in range(p):
                    T[i, j] = S[order[i], order[j]] - T[i, j]
        P = T.copy()
        for i in range(p):
            P[i, i] += psi
        L = np.linalg.cholesky(P)
        G = np.zeros((b, b))
        for i in range(b):
            G[i, i] = np.sqrt(chis[c + i])
            for j in range(i):
                G[i, j] = normals[u]
                u += 1
        c += b
        H = np.ascontiguousarray(L[a:, a:]) @ _lower_inverse(G).T
        O_BA = H @ H.T
        V = np.linalg.cholesky(0.5 * (O_BA + O_BA.T))
        E = normals[u:u + a * b].copy().reshape(a, b)
        u += a * b
        Beta = upper_solve(L[:a, :a], np.ascontiguousarray(L[a:, :a].T) + E @ V.T)   # L_AA^-T (...)
        XR = np.empty((a, R.size))
        for i in range(a):
            for k in range(R.size):
                XR[i, k] = Zc[order[i], R[k]]
        noise = normals[u:u + b * R.size].copy().reshape(b, R.size)
        u += b * R.size
        cells = np.ascontiguousarray(Beta.T) @ XR + V @ noise
        for i in range(b):
            j = order[a + i]
            for k in range(R.size):
                Zc[j, R[k]] = cells[i, k]
                Zt[j, R[k]] = cells[i, k] + alpha[j]
        XRc = XR @ cells.T
        CC = cells @ cells.T
        for i in range(a):
            for j in range(b):
                v = T[i, a + j] + XRc[i, j]
                S[order[i], order[a + j]] = v
                S[order[a + j], order[i]] = v
        for i in range(b):
            for j in range(b):
                S[order[a + i], order[a + j]] = T[a + i, a + j] + CC[i, j]
    return Beta, O_BA


@nb.njit(cache=True)
def _lower_inverse(G):
    """The inverse of a lower-triangular (q, q) matrix, by forward substitution."""
    q = G.shape[0]
    out = np.zeros((q, q))
    for j in range(q):
        out[j, j] = 1.0 / G[j, j]
        for i in range(j + 1, q):
            acc = 0.0
            for k in range(j, i):
                acc += G[i, k] * out[k, j]
            out[i, j] = -acc / G[i, i]
    return out


@nb.njit(cache=True)
def upper_solve(L, Y):
    """X with L' X = Y for lower-triangular L (a, a) and Y (a, b), by back substitution."""
    a, b = Y.shape
    X = np.empty((a, b))
    for j in range(b):
        for i in range(a - 1, -1, -1):
            acc = Y[i, j]
            for k in range(i + 1, a):
                acc -= L[k, i] * X[k, j]
            X[i, j] = acc / L[i, i]
    return X


def _inverse_wishart(df: float, scale: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One draw of IW(df, scale), (q, q), by Bartlett's decomposition of its inverse."""
    q = scale.shape[0]
    return inverse_wishart_from(scale, rng.standard_normal((q, q)), rng.chisquare(df - np.arange(q)))


@nb.njit(cache=True)
def inverse_wishart_from(scale, normals, chis):
    """IW(df, scale) from its random parts: the Bartlett factor B (q, q) with ``normals``
    below the diagonal (those above are unused) and sqrt(``chis``) on it (chi-squares of
    df - i degrees of freedom): inv(L B B' L') with L L' = inv(scale), symmetrized."""
    q = scale.shape[0]
    bartlett = np.zeros((q, q))
    for i in range(q):
        bartlett[i, i] = np.sqrt(chis[i])
        for j in range(i):
            bartlett[i, j] = normals[i, j]
    factor = np.linalg.cholesky(np.linalg.inv(0.5 * (scale + scale.T))) @ bartlett
    out = np.linalg.inv(factor @ factor.T)
    return 0.5 * (out + out.T)
