"""The collapsed move of a rare binary's row of Omega (binary_rows.py) leaves the posterior
exactly invariant."""
import numpy as np
import pytest
from scipy import stats

from mixsynth import binary_rows
from mixsynth.binary_rows import move_binary_rows, rare_binaries
from mixsynth.latent import LatentColumn, build_constraints
from mixsynth.truncnorm import seed_streams


def test_the_inverse_wisharts_regression_prior_is_the_one_the_move_uses():
    """Under Omega ~ IW(nu, psi I), with Omega_(-j,-j) and s^2 held, the log density of Omega
    as a function of the regression coefficients b of column j on the others is
    -psi |b|^2 / (2 s^2) plus a constant: the prior the move's probit regression takes."""
    rng = np.random.default_rng(0)
    p, j, psi = 5, 2, 3.0
    omega = stats.invwishart(df=p + 4, scale=psi * np.eye(p)).rvs(random_state=rng)
    rest = [0, 1, 3, 4]
    o22 = omega[np.ix_(rest, rest)]
    s2 = omega[j, j] - omega[rest, j] @ np.linalg.solve(o22, omega[rest, j])
    gaps = []
    for _ in range(5):
        b = rng.standard_normal(4)
        new = omega.copy()
        new[rest, j] = new[j, rest] = o22 @ b
        new[j, j] = s2 + b @ o22 @ b
        gaps.append(stats.invwishart(df=p + 4, scale=psi * np.eye(p)).logpdf(new) + psi * b @ b / (2 * s2))
    assert np.ptp(gaps) < 1e-8, gaps


@pytest.mark.parametrize("hessian_rows, n, ones", [(2000, 40, 3), (30, 200, 12)])
def test_the_move_keeps_an_exact_posterior_draw_exact(monkeypatch, hessian_rows, n, ones):
    """Draw b ~ N(0, s^2 / psi), z_x ~ N(0, 1) and z_b ~ N(b z_x, s^2) on n rows, and call the
    top rows of z_b the binary's ones: (b, z_b) is then an exact draw from the posterior given
    z_x and the binary. Five moves must leave the means of b^2, of the gap between the two
    groups and of the ones' latents where they are (over 3,000 replications). Without the
    gap's correction the move targets the free-cutpoint model, whose latents spread apart:
    on 40 rows with 3 ones the mean gap nearly doubles (0.39 against 0.21); a prior twice too
    wide lifts the mean of b^2 by a quarter. On 200 rows with 12 ones and the proposal's
    curvature summed over the ones and 30 others, it must stay exact too; taking the log
    posterior over those rows only fails it (checked)."""
    monkeypatch.setattr(binary_rows, "HESSIAN_ROWS", hessian_rows)
    rng = np.random.default_rng(5)
    psi, s = 2.0, 1.0
    columns = [LatentColumn("x", "x", "value"), LatentColumn("b", "b", "value")]
    streams = seed_streams(np.random.SeedSequence(9), 2)
    reps = 3000
    exact, moved = np.empty((reps, 3)), np.empty((reps, 3))
    changed = 0
    for r in range(reps):
        b = rng.normal(0.0, s / np.sqrt(psi))
        zx = rng.standard_normal(n)
        zb = b * zx + s * rng.standard_normal(n)
        y = np.zeros(n)
        y[np.argsort(zb)[-ones:]] = 1.0
        cons = build_constraints(columns, {"x": zx, "b": y}, np.zeros((0, n), np.int64), {})
        assert [j for j, _, _ in rare_binaries(cons)] == [1]
        omega = np.array([[1.0, b], [b, s * s + b * b]])
        Zt = np.vstack([zx, zb])
        exact[r] = b * b, zb[y == 1].min() - zb[y == 0].max(), zb[y == 1].mean()
        for _ in range(5):
            omega = move_binary_rows(omega, Zt, np.zeros(2), cons, psi, rng, streams)
        b_new = omega[0, 1]
        changed += b_new != b
        moved[r] = b_new * b_new, Zt[1, y == 1].min() - Zt[1, y == 0].max(), Zt[1, y == 1].mean()
        assert np.isclose(omega[1, 1] - b_new * b_new, s * s)   # s, which the likelihood does not see, stays
    assert changed > 0.5 * reps                                  # the move does move
    diff = moved - exact   # paired: each replication's draw before and after its moves
    assert np.all(np.abs(diff.mean(axis=0)) < 4 * diff.std(axis=0) / np.sqrt(reps)), (moved.mean(0), exact.mean(0))

