"""Small dense linear algebra for the compiled moves: triangular solves and inverses, and
an inverse-Wishart draw assembled from random parts drawn outside (so a chain's generator,
not numba's, supplies them)."""
import numba as nb
import numpy as np


@nb.njit(cache=True)
def upper_solve(L, Y):
    """X (a, b) with L' X = Y for lower-triangular L (a, a) and Y (a, b), by back substitution."""
    a, b = Y.shape
    X = np.empty((a, b))
    for j in range(b):
        for i in range(a - 1, -1, -1):
            acc = Y[i, j]
            for k in range(i + 1, a):
                acc -= L[k, i] * X[k, j]
            X[i, j] = acc / L[i, i]
    return X


@nb.njit(cache=True)
def lower_inverse(G):
    """The inverse (q, q) of a lower-triangular (q, q) matrix, by forward substitution."""
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
def inverse_wishart_from(scale, normals, chis):
    """IW(df, scale) (q, q) from its random parts: the Bartlett factor B (q, q) with
    ``normals`` (q, q) below the diagonal (those on and above it are unused) and sqrt(``chis``)
    (q,) on it (chi-squares of df - i degrees of freedom): inv(L B B' L') with L L' =
    inv(scale), symmetrized."""
    q = scale.shape[0]
    bartlett = np.zeros((q, q))
    for i in range(q):
        bartlett[i, i] = np.sqrt(chis[i])
        for j in range(i):
            bartlett[i, j] = normals[i, j]
    factor = np.linalg.cholesky(np.linalg.inv(0.5 * (scale + scale.T))) @ bartlett
    out = np.linalg.inv(factor @ factor.T)
    return 0.5 * (out + out.T)
