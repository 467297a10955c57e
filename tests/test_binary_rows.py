"""The collapsed move of a rare binary's row of Omega (binary_rows.py) leaves the posterior
exactly invariant."""
import numpy as np
import pytest
from scipy import stats

from mixsynth import binary_rows
from mixsynth.binary_rows import move_binary_rows, rare_binaries
from mixsynth.constraints import build_constraints
from mixsynth.kernels import binary_rows as compiled
from mixsynth.kernels.truncnorm import seed_streams
from mixsynth.latent_columns import LatentColumn


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



def test_log_ndtr_is_scipys_in_both_tails():
    from scipy.special import log_ndtr

    x = np.r_[-60.0, -35.0, -20.5, -20.0, -19.5, -8.0, -1.0, 0.0, 2.5, 6.0, 6.5, 12.0, 40.0]
    ours = np.array([compiled.log_ndtr(v) for v in x])
    assert np.allclose(ours, log_ndtr(x), rtol=1e-13, atol=1e-300)


def test_probit_terms_are_the_probits_log_posterior_gradient_and_curvature():
    """The compiled terms against the formulas written with numpy and scipy: sum log Phi(u) -
    prior theta^2 / 2, its gradient, and the weighted curvature over the chosen rows; the
    gradient is also the finite difference of the log posterior."""
    from scipy.special import log_ndtr

    rng = np.random.default_rng(4)
    p, n, j = 6, 80, 2
    Zt = rng.standard_normal((p, n))
    alpha = rng.standard_normal(p)
    sign = rng.choice([-1.0, 0.0, 1.0], n, p=[0.8, 0.05, 0.15])
    rows = np.sort(rng.choice(n, 30, replace=False))
    weight = rng.uniform(1.0, 3.0, rows.size)
    prior = np.full(p, 2.0)
    prior[j] = 0.0
    At = Zt[:, rows] - alpha[:, None]
    At[j] = -1.0
    theta = rng.standard_normal(p)

    def log_post(t):
        coef = t.copy()
        coef[j] = 0.0
        u = sign * (coef @ Zt - coef @ alpha - t[j])
        return log_ndtr(u[sign != 0]).sum() - 0.5 * prior @ (t * t), u

    lp, grad, H = compiled.probit_terms(theta, j, Zt, alpha, sign, rows, weight, np.ascontiguousarray(At), prior)
    want, u = log_post(theta)
    mills = np.where(sign != 0, np.exp(-0.5 * u * u - log_ndtr(u)) / np.sqrt(2 * np.pi), 0.0)
    v = sign * mills
    g = Zt @ v - alpha * v.sum()
    g[j] = -v.sum()
    g -= prior * theta
    h = (At * (weight * mills[rows] * (mills[rows] + u[rows]))) @ At.T + np.diag(prior)
    assert np.isclose(lp, want, rtol=1e-12) and np.allclose(grad, g, rtol=1e-10) and np.allclose(H, h, rtol=1e-10)
    step = 1e-6 * np.eye(p)
    fd = np.array([(log_post(theta + e)[0] - log_post(theta - e)[0]) / 2e-6 for e in step])
    assert np.allclose(grad, fd, rtol=1e-5, atol=1e-6)


def test_newton_step_is_the_cholesky_and_the_solve():
    rng = np.random.default_rng(6)
    a = rng.standard_normal((7, 7))
    H = a @ a.T + 0.1 * np.eye(7)
    grad = rng.standard_normal(7)
    chol, step = np.empty_like(H), grad.copy()
    assert compiled.newton_step(H, step, 1.2, chol)
    assert np.allclose(chol, np.linalg.cholesky(H / 1.2), rtol=1e-12) and np.allclose(step, np.linalg.solve(H, grad))
    H[3, 3] = -1.0
    assert not compiled.newton_step(H, grad.copy(), 1.2, chol)
