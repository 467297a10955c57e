"""The draw of Omega with a blank pattern's cells integrated out (blank_cells.py) leaves the
posterior exactly invariant."""
import numpy as np

from mixsynth.blank_cells import blank_patterns, draw_omega
from mixsynth.constraints import build_constraints
from mixsynth.latent_columns import LatentColumn


def test_patterns_group_the_columns_blank_in_the_same_rows():
    n = 12
    y = {name: np.arange(n, dtype=float) for name in "abcd"}
    for name in "ab":
        y[name][[2, 5, 7]] = np.nan
    y["c"][[2, 5]] = np.nan
    columns = [LatentColumn(name, name, "value") for name in "abcd"]
    cons = build_constraints(columns, y, np.zeros((0, n), np.int64), {})
    pats = cons.blank_patterns
    found = sorted((pats.perm[t, 4 - pats.blank[t]:].tolist(), pats.rows_of(t).tolist()) for t in range(pats.size))
    assert found == [([0, 1], [2, 5, 7]), ([2], [2, 5])]


def test_the_draw_keeps_an_exact_prior_draw_exact():
    """Omega ~ IW(nu, psi I) and z_i ~ N(alpha, Omega) on 6 rows make (Omega, Z) an exact draw
    of the posterior given any part of Z. With column 2 blank in rows 4-5 and columns 3 and
    4 in rows 0-3 (most rows: their scatter is summed over the rows that see them), one draw
    (both patterns in turn) must leave Omega distributed as its prior, E Omega^-1 = nu / psi I
    (4,000 replications; each mean within 4 standard errors), and the imputed cells as they
    were (paired before and after; even functions, as the prior's sign symmetry makes every
    odd one average 0 whatever the draw). Checked to fail when Omega_AA's degrees of freedom
    are nu + n instead of nu - |B| + n, when Omega_B.A's count the blank rows, when the cells
    are drawn around M instead of Beta, or with half their noise, or when the Bartlett
    factor of Omega_B.A has no noise below its diagonal."""
    rng = np.random.default_rng(3)
    p, n, nu, psi, reps = 5, 6, 9.0, 2.0, 4000
    alpha = np.array([0.0, 0.5, -1.0, 0.0, 0.3])
    missing = np.array([4, 5, 0, 1, 2, 3, 0, 1, 2, 3])
    patterns = blank_patterns(missing, np.array([0, 0, 0, 2, 6, 10]), n)
    assert patterns.subtract.tolist() == [True, False]
    inverse = np.empty((reps, p, p))
    cells = np.empty((reps, 3))
    for r in range(reps):
        W = rng.standard_normal((int(nu), p)) / np.sqrt(psi)
        Omega = np.linalg.inv(W.T @ W)                   # IW(nu, psi I), nu an integer
        Zt = alpha[:, None] + np.linalg.cholesky(Omega) @ rng.standard_normal((p, n))
        before = _cell_statistics(Zt, alpha)
        inverse[r] = np.linalg.inv(draw_omega(Zt, alpha, patterns, nu, psi, rng))
        cells[r] = _cell_statistics(Zt, alpha) - before
    mean, se = inverse.mean(axis=0), inverse.std(axis=0) / np.sqrt(reps)
    assert np.all(np.abs(mean - nu / psi * np.eye(p)) < 4 * se), mean
    assert np.all(np.abs(cells.mean(axis=0)) < 4 * cells.std(axis=0) / np.sqrt(reps)), cells.mean(axis=0)


def _cell_statistics(Zt: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """Bounded even functions of imputed cells (3, 0), (4, 0) and (2, 5), with an observed one."""
    w = Zt - alpha[:, None]
    return np.tanh([w[3, 0] ** 2, (w[4, 0] * w[1, 0]) ** 2, w[2, 5] ** 2])


def test_with_no_blanks_it_is_the_conjugate_draw():
    """No pattern: Omega ~ IW(nu + n, psi I + S) with S the centred scatter, E Omega^-1 =
    (nu + n) (psi I + S)^-1 (3,000 draws, within 4 standard errors)."""
    rng = np.random.default_rng(4)
    Zt = rng.standard_normal((3, 20))
    Zt[1] += 0.8 * Zt[0]
    alpha = np.zeros(3)
    draws = np.array([np.linalg.inv(draw_omega(Zt, alpha, blank_patterns(np.zeros(0, np.int64), np.zeros(4, np.int64), 20), 5.0, 1.5, rng)) for _ in range(3000)])
    expected = 25.0 * np.linalg.inv(1.5 * np.eye(3) + Zt @ Zt.T)
    assert np.all(np.abs(draws.mean(axis=0) - expected) < 4 * draws.std(axis=0) / np.sqrt(3000))


def test_the_compiled_inverse_wishart_is_bartletts_construction():
    """The draw from its random parts equals the numpy construction, and its mean over
    draws is scale / (df - q - 1)."""
    from mixsynth.blank_cells import _inverse_wishart
    from mixsynth.kernels.linalg import inverse_wishart_from

    rng = np.random.default_rng(3)
    q, df = 4, 12.0
    a = rng.standard_normal((q, q))
    scale = a @ a.T + np.eye(q)
    normals, chis = rng.standard_normal((q, q)), rng.chisquare(df - np.arange(q))
    bartlett = np.tril(normals, -1)
    bartlett[np.diag_indices(q)] = np.sqrt(chis)
    factor = np.linalg.cholesky(np.linalg.inv(scale)) @ bartlett
    assert np.allclose(inverse_wishart_from(scale, normals, chis), np.linalg.inv(factor @ factor.T), rtol=1e-10)
    mean = np.mean([_inverse_wishart(df, scale, rng) for _ in range(20000)], axis=0)
    assert np.allclose(mean, scale / (df - q - 1), rtol=0.05, atol=0.02)
