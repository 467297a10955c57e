"""Simulation-based calibration (Talts et al. 2018) of the sampler's moves.

Each replication draws the parameters from the prior, a latent table from them and the
observed table from the latent one, runs the chain, and records the rank of the true value
of a few quantities among the thinned posterior draws. When every move leaves the
posterior invariant those ranks are uniform; a wrong move (a missing Jacobian in the scale
move, a wrong conditional) piles them at one end or in the middle.

The observed tables are made so the rank likelihood is exact: the binary's ones are the top
rows of its latent column (a 2% prevalence), the ordinal's groups have fixed sizes, the
continuous column's blanks fall on rows chosen at random. For the 9-level categorical the
extended rank-probit likelihood is the probability of the observed orthant, which is a
proper likelihood only given that every row has one positive level; rejecting tables with a
row that has none or several (a Bernoulli factory) draws the parameters from exactly the
prior that makes the sampler's target the posterior.
"""
import numpy as np
import pytest
from scipy import stats

from mixsynth import moves
from mixsynth.constraints import TIE_ROWS, build_constraints
from mixsynth.diagnostics import copula_correlation
from mixsynth.latent_columns import LatentColumn
from mixsynth.moves import Prior
from mixsynth.sampler import SamplerSettings, run_chain

PRIOR = Prior()
BINS = 5


def prior_omega(p: int, k: int | None, n: int, rng) -> np.ndarray:
    """Omega from the full structure's IW(p + 2 + m, (1 + m) I) for n rows (k None) or the
    factor structure's MGP prior."""
    if k is None:
        m = PRIOR.omega_weight(n)
        return stats.invwishart(df=p + 2 + m, scale=(1 + m) * np.eye(p)).rvs(random_state=rng)
    delta = np.r_[rng.gamma(PRIOR.a1, 1.0), rng.gamma(PRIOR.a2, 1.0, size=k - 1)]
    phi = rng.gamma(PRIOR.nu / 2, 2.0 / PRIOR.nu, size=(p, k))
    Lambda = rng.standard_normal((p, k)) / np.sqrt(phi * np.cumprod(delta))
    sigma2 = 1.0 / rng.gamma(PRIOR.a_sigma, 1.0 / PRIOR.b_sigma, size=p)
    return Lambda @ Lambda.T + np.diag(sigma2)


def posterior(cons, k: int, seed: int, burn: int, kept: int, thin: int):
    """Thinned draws of C (T, p, p) and of alpha / sqrt(Omega_jj) (T, p) from one chain."""
    settings = SamplerSettings(sweeps=burn + kept * thin, burn_in=burn, thin=thin, chains=1, prior=PRIOR)
    draws = run_chain(cons, k, settings, np.random.SeedSequence(seed))
    C = copula_correlation(draws["Lambda"], draws["sigma2"])
    omega_diag = (draws["Lambda"] ** 2).sum(-1) + draws["sigma2"]
    return C, draws["alpha"] / np.sqrt(omega_diag)


def rank_table(n: int, Z: np.ndarray, rng, tie_rows: int = TIE_ROWS):
    """Constraints of a continuous column with 10% blanks, a binary whose ones are the top 2%
    of its latent column and a 4-level ordinal with fixed group sizes, from latent Z (n, 3);
    boundaries between groups of ``tie_rows`` rows get cut moves."""
    x = Z[:, 0].copy()
    x[rng.choice(n, n // 10, replace=False)] = np.nan
    b = np.zeros(n)
    b[np.argsort(Z[:, 1])[-max(1, round(0.02 * n)):]] = 1.0
    sizes = np.array([0.3, 0.3, 0.25, 0.15]) * n
    o = np.empty(n)
    o[np.argsort(Z[:, 2])] = np.repeat(np.arange(4.0), np.diff(np.r_[0, np.round(np.cumsum(sizes))]).astype(int))
    columns = [LatentColumn(name, name, "value") for name in ("x", "b", "o")]
    return build_constraints(columns, {"x": x, "b": b, "o": o}, np.zeros((0, n), np.int64), {}, tie_rows)


def uniform_p_value(ranks: np.ndarray, kept: int) -> float:
    """Chi-square p-value of ranks (0..kept) against the uniform, in BINS equal bins."""
    counts = np.bincount(ranks * BINS // (kept + 1), minlength=BINS)
    return stats.chisquare(counts).pvalue


STRUCTURES = [pytest.param(None, 300, id="full"),                       # k = p: IW, the default below 120 columns
              pytest.param(2, 150, id="factor", marks=pytest.mark.slow)]  # the MGP factor model
CUT_MOVES = [pytest.param(False, id="as-fitted"),   # cut moves between groups of 20 rows, a quarter of the sweeps
             pytest.param(True, id="cut-moves-everywhere")]   # at every boundary, every sweep


@pytest.mark.parametrize("cut_moves", CUT_MOVES)
@pytest.mark.parametrize("k, reps", STRUCTURES)
def test_ranks_of_the_truth_are_uniform_for_rank_columns(k, reps, cut_moves, monkeypatch):
    n, p, kept = 150, 3, 14
    if cut_moves:   # the binary's 3 ones and the ordinal's groups of 23-45 rows
        monkeypatch.setattr(moves, "CUT_SHARE", 1.0)
    rng = np.random.default_rng(20261201)
    pairs = [(0, 1), (0, 2), (1, 2)]
    ranks = np.empty((reps, len(pairs)), dtype=int)
    for r in range(reps):
        omega = prior_omega(p, k, n, rng)
        Z = rng.multivariate_normal(np.zeros(p), omega, size=n)
        C_true = omega / np.sqrt(np.outer(np.diag(omega), np.diag(omega)))
        C, _ = posterior(rank_table(n, Z, rng, 2 if cut_moves else TIE_ROWS), k or p, seed=r,
                         burn=300, kept=kept, thin=25)
        ranks[r] = [(C[:, a, b] < C_true[a, b]).sum() for a, b in pairs]
    p_values = [uniform_p_value(ranks[:, q], kept) for q in range(len(pairs))]
    assert min(p_values) > 0.001, p_values


@pytest.mark.parametrize("k, reps", STRUCTURES)
def test_ranks_of_the_truth_are_uniform_for_a_nine_level_categorical(k, reps):
    levels, kept = 9, 14
    p = levels + 1
    rng = np.random.default_rng(7)
    ranks = np.empty((reps, 3), dtype=int)
    columns = [LatentColumn(f"c={m}", "c", "level", m) for m in range(levels)] + [LatentColumn("x", "x", "value")]
    r = 0
    while r < reps:
        omega = prior_omega(p, k, 1, rng)
        alpha = np.r_[rng.normal(0.0, np.sqrt(PRIOR.alpha_var), levels), 0.0]
        z = rng.multivariate_normal(alpha, omega)
        if (z[:levels] > 0).sum() != 1:   # the Bernoulli factory: redraw the parameters
            continue
        code = np.array([[int(np.argmax(z[:levels]))]], dtype=np.int64)
        cons = build_constraints(columns, {"x": z[levels:]}, code, {"c": 0})
        C, alpha_std = posterior(cons, k or p, seed=r, burn=200, kept=kept, thin=10)
        C_true = omega / np.sqrt(np.outer(np.diag(omega), np.diag(omega)))
        truth = [alpha[0] / np.sqrt(omega[0, 0]), C_true[0, levels], C_true[0, 1]]
        draws = [alpha_std[:, 0], C[:, 0, levels], C[:, 0, 1]]
        ranks[r] = [(d < t).sum() for d, t in zip(draws, truth)]
        r += 1
    p_values = [uniform_p_value(ranks[:, q], kept) for q in range(3)]
    assert min(p_values) > 0.001, p_values
