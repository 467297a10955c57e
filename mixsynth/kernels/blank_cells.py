"""The compiled loop of the full structure's draw of Omega with each blank pattern's cells
integrated out, and the patterns as one structure (the method, its formulas and the
plain-Python draw that calls it: mixsynth/blank_cells.py)."""
from typing import NamedTuple

import numba as nb
import numpy as np

from .linalg import lower_inverse, upper_solve


class BlankPatterns(NamedTuple):
    """Every set of latent columns blank in exactly the same rows, as flat int64 arrays.

    perm: (m, p) pattern t's columns with the others (A) first and its blank ones (B) last;
    blank: (m,) |B|;
    rows: the blank rows R, pattern t's at ``rows[rows_ptr[t]:rows_ptr[t + 1]]``;
    side: the rows the scatter of the rows that see B is summed over, pattern t's at
        ``side[side_ptr[t]:side_ptr[t + 1]]``: R (``subtract[t]``, (m,) bool: the scatter
        is the total less theirs) or the rows outside R, whichever are fewer.
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
        """m, the number of patterns."""
        return int(self.blank.size)

    def rows_of(self, t: int) -> np.ndarray:
        return self.rows[self.rows_ptr[t]:self.rows_ptr[t + 1]]


@nb.njit(cache=True)
def draw_patterns(Zt, Zc, S, alpha, psi, patterns, normals, chis):
    """The patterns' loop of blank_cells.draw_omega: for each pattern in turn, Omega's
    blocks from their posterior and the pattern's cells given them. Zt (p, n) the latents,
    Zc (p, n) = Zt - alpha and S = Zc Zc' (p, p), all three updated in place with each
    pattern's new cells; alpha (p,); psi the prior's scale (IW(nu, psi I)); patterns the
    BlankPatterns; normals and chis the random parts, drawn beforehand in the order used
    here. Returns the last pattern's Beta (a, b) and Omega_B.A (b, b).

    In pattern order (A, B), the Cholesky factor L of psi I + the seen rows' scatter holds
    P = L_AA L_AA', L_BA = (L_AA^-1 X'Y)' and the residual scale L_BB L_BB'; Omega_B.A ~
    IW(df, L_BB L_BB') is L_BB G^-T G^-1 L_BB' with G a Bartlett factor (chis: its squared
    diagonal, df = nu + n - |R| - i)."""
    p, n = Zc.shape
    u, c = 0, 0   # next unused normal and chi-square
    Beta = np.zeros((0, 0))
    O_BA = np.zeros((0, 0))
    for t in range(patterns.blank.size):
        b = patterns.blank[t]
        a = p - b
        order = patterns.perm[t]
        R = patterns.rows[patterns.rows_ptr[t]:patterns.rows_ptr[t + 1]]
        rows_side = patterns.side[patterns.side_ptr[t]:patterns.side_ptr[t + 1]]
        Zs = np.empty((p, rows_side.size))
        for i in range(p):
            for k in range(rows_side.size):
                Zs[i, k] = Zc[order[i], rows_side[k]]
        T = Zs @ Zs.T
        if patterns.subtract[t]:
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
        H = np.ascontiguousarray(L[a:, a:]) @ lower_inverse(G).T
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
def assemble(O_AA, Beta, O_BA, order):
    """Omega (p, p) from its blocks in pattern order (A: the first a of ``order`` (p,), B
    the rest): Omega_AA (a, a), Omega_AB = Omega_AA Beta with Beta (a, b), Omega_BB =
    Omega_B.A + Beta' Omega_AA Beta with Omega_B.A (b, b); symmetrized."""
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
