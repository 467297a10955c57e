"""Fitting one response: rank-likelihood BART (method.md section 6), probit BART for binaries.

A declared response leaves the copula and is modelled given the copula's columns and the
responses declared before it (maths given reading and x, so the two stay correlated):

    z_i = f(x_i) + e_i,  e_i ~ N(0, sigma^2),  f ~ BART,  order of z = order of y.

Gibbs in two blocks: the latent z between its rank neighbours (the core's truncated-normal
kernel) and one BART sweep with the error variance (stochtree's low-level sampler).

The rank likelihood does not see the scale of z, and a prototype started from normal
scores with sigma near 1 saw the scale of f move very slowly. Here the scale is fixed by
construction: z starts as standardized normal scores, the leaf prior is calibrated to that
scale (variance 1 / trees, as BART calibrates to a standardized outcome), the burn-in opens
with grow-from-root sweeps, and every burn-in sweep divides z, the forest and sigma by the
sample standard deviation of z, so the chain enters its kept draws on the calibrated scale
(``rescale=False`` drops that step, for comparison). Started at sigma^2 = 1, sigma^2 of
the paper-layout reading score reached its stationary level within a few sweeps, with or
without the rescaling; tests/test_responses.py checks on a tied Friedman response that
the explained share of latent variance matches the truth after the burn-in sweeps and
that the kept sigma^2 draws are stationary.

The error variance of an ordered response depends on x too (``variance_trees`` > 0):
log sigma^2(x) is a forest of stochtree's log-linear variance leaves (Murray 2021,
"Log-linear Bayesian additive regression trees for multinomial logistic and count
regression models", JASA; the heteroskedastic BART of stochtree), sampled after the mean
forest each sweep with the global variance fixed at 1; the latent is drawn with each row's
own sd, and a burn-in rescaling shifts the log-variance forest by -2 log s. Where the
spread of a response differs across the other columns (age given marital status in the
nonlinear survey), one error variance misplaces the synthetic rows: the regressions users
run on them (``married ~ age + I(age**2)`` and the wage regression there, the log-wage
regression of CPS 1988 with nothing declared) overlap the real fits less than with the
variance forest.

The trees shrink linear effects: BART's posterior mean is a sum of many small steps, and
where the signal is weak against the noise its slope in a number is pulled towards 0
(NHEFS's weight gain given age and weight: the trees' slopes fell short of the normal
scores' least squares slopes, and the synthetic files' regressions lost much of the age
effect). So the mean holds a linear term beside the trees (``linear``), as in
semiparametric BART (Zeldow, Lo Re and Roy 2019, "A semiparametric modeling approach
using Bayesian Additive Regression Trees with an application to evaluate heterogeneous
treatment effects", Annals of Applied Statistics; Prado, Moral and Parnell 2021,
"Semi-parametric Bayesian additive regression trees", on the trees sharing the linear
term's covariates): z_i = b_i' beta + f(x_i) + e_i, b_i the
numeric features standardized (a blank at 0; the trees split blanks off), beta ~ N(0, I)
drawn each sweep given z - f by weighted least squares (weights 1 / sigma^2(x_i)), the
trees given z - b' beta, which brings those two slopes close to least squares.

A binary response takes probit BART instead (Chipman, George and McCulloch 2010, section
5; Albert and Chib 1993): z_i ~ N(offset + f(x_i), 1) truncated to the side its 0/1 value
gives, the error variance fixed at 1, offset = Phi^-1 of the observed share of ones. Its
two tie groups would pin a rank-likelihood threshold between thousands of latents (moved
O(1/n) a sweep); the probit's threshold is fixed at 0 and the intercept is the offset plus
the forest.

Cost: a grow-from-root sweep costs many MCMC sweeps, so only the first few are grown
from the root. The defaults (5 grow-from-root sweeps opening 50 burn-in sweeps, then 200
kept, every 4th forest stored: 50 forests) are a fraction of the earlier 100 + 1,000
sweeps; synthesis uses the posterior mean of f over the stored forests, which 50 forests
estimate well. Above ``max_rows`` rows the fit uses a seeded subsample of that many rows
(f is a regression function: 50,000 rows pin it down).
"""
import numpy as np
from scipy import special
from stochtree import Dataset, Forest, ForestContainer, ForestSampler, GlobalVarianceModel, Residual, RNG
from stochtree.config import ForestModelConfig, GlobalModelConfig

from ..config import BartSettings
from ..constraints import build_constraints, draw_latent, initial_latent
from ..kernels.truncnorm import draw_probit, seed_streams
from ..latent_columns import LatentColumn
from .design import Design, LinearPart, Rows
from .response_model import ResponseModel


def _draw_beta(B: np.ndarray, weight: np.ndarray, r: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """beta ~ its conditional given residuals r (n,) = B beta + e, e_i ~ N(0, 1 / weight_i),
    under beta ~ N(0, I): B (n, q) the standardized basis."""
    BW = B * weight[:, None]
    P = BW.T @ B + np.eye(B.shape[1])
    L = np.linalg.cholesky(P)
    mean = np.linalg.solve(L.T, np.linalg.solve(L, BW.T @ r))
    return mean + np.linalg.solve(L.T, rng.standard_normal(B.shape[1]))


def fit_response(name: str, y: np.ndarray, X: np.ndarray, design: Design, settings: BartSettings,
                 seed: np.random.SeedSequence, probit: bool = False) -> ResponseModel:
    """Fit rank-likelihood BART (probit BART with ``probit``, y then 0/1) for response
    values ``y`` (n,), NaN missing, on X (n, q) or its ``Rows``; above ``settings.max_rows``
    rows on a seeded subsample."""
    rows_seed, stream_seed, tree_seed, beta_seed = seed.spawn(4)
    if y.size > settings.max_rows:
        keep = np.sort(np.random.default_rng(rows_seed).choice(y.size, settings.max_rows, replace=False))
        y, X = y[keep], X[keep]
    if isinstance(X, Rows):
        X = X.matrix()
    n, q = X.shape
    linear = LinearPart.fit(X, design) if settings.linear else None
    B = linear.basis(X) if linear is not None else np.zeros((n, 0))
    beta, lin, betas = np.zeros(B.shape[1]), np.zeros(n), []
    beta_rng = np.random.default_rng(beta_seed)
    streams = seed_streams(stream_seed, 1)
    rng = RNG(int(tree_seed.generate_state(1)[0] % (2 ** 31 - 1)))
    if probit:
        share = float(np.clip(np.nanmean(y), 0.5 / n, 1.0 - 0.5 / n))
        offset = float(special.ndtri(share))
        z = np.where(np.isnan(y), 0.0, np.where(y == 1.0, 1.0, -1.0))
        cons = None
    else:
        offset = 0.0
        cons = build_constraints([LatentColumn(name, name, "value")], {name: y},
                                 np.zeros((0, n), np.int64), {})
        Zt = initial_latent(cons)                              # normal scores, (1, n)
        Zt /= Zt.std()
        z = Zt[0]

    dataset = Dataset()
    dataset.add_covariates(X)
    residual = Residual(z - offset)
    forest_config = ForestModelConfig(
        num_trees=settings.trees, num_features=q, num_observations=n,
        feature_types=np.zeros(q, dtype=int), variable_weights=np.full(q, 1.0 / q),
        alpha=settings.alpha, beta=settings.beta, min_samples_leaf=settings.min_samples_leaf,
        leaf_model_type=0, leaf_model_scale=np.array([[1.0 / settings.trees]]))
    sigma2 = 1.0
    global_config = GlobalModelConfig(global_error_variance=sigma2)
    sampler = ForestSampler(dataset, global_config, forest_config)
    container = ForestContainer(settings.trees, 1, True, False)
    forest = Forest(settings.trees, 1, True, False)
    sampler.prepare_for_sampler(dataset, residual, forest, 0, np.array([0.0]))
    variance = GlobalVarianceModel()
    nv = 0 if probit else settings.variance_trees
    if nv:
        # log sigma^2(x) = sum of nv trees; stochtree's calibration (shape nv / 1.5^2 + 0.5,
        # scale nv / 1.5^2), started at 0.6 of the latent variance as stochtree starts it
        dataset.add_variance_weights(np.ones(n))
        var_config = ForestModelConfig(
            num_trees=nv, num_features=q, num_observations=n, feature_types=np.zeros(q, dtype=int),
            variable_weights=np.full(q, 1.0 / q), alpha=settings.alpha, beta=settings.beta,
            min_samples_leaf=settings.min_samples_leaf, leaf_model_type=3,
            variance_forest_shape=nv / 1.5 ** 2 + 0.5, variance_forest_scale=nv / 1.5 ** 2)
        var_sampler = ForestSampler(dataset, global_config, var_config)
        var_container = ForestContainer(nv, 1, True, True)
        var_forest = Forest(nv, 1, True, True)
        var_sampler.prepare_for_sampler(dataset, residual, var_forest, 3, np.array([0.6]))
        sd = np.full((1, n), np.sqrt(0.6))

    f = np.zeros(n)
    kept = []
    for it in range(settings.burn_in + settings.draws):
        if probit:
            draw_probit(z, f + lin + offset, y, streams)
        else:
            draw_latent(Zt, (f + lin)[None, :], sd if nv else np.array([np.sqrt(sigma2)]), cons, streams)
        residual.update_data(z - offset - lin - f)
        after = it - settings.burn_in
        keep = after >= 0 and after % settings.keep_every == 0
        warm = it < settings.warm_start
        sampler.sample_one_iteration(container, forest, dataset, residual, rng, global_config,
                                     forest_config, keep, warm, 1)
        f = sampler.get_cached_forest_predictions().copy()
        if B.shape[1]:
            weight = 1.0 / sd[0] ** 2 if nv else np.full(n, 1.0 / sigma2)
            beta = _draw_beta(B, weight, z - offset - f, beta_rng)
            lin = B @ beta
            residual.update_data(z - offset - lin - f)
            if keep:
                betas.append(beta)
        if nv:
            var_sampler.sample_one_iteration(var_container, var_forest, dataset, residual, rng,
                                             global_config, var_config, keep, warm, 1)
        elif not probit:
            sigma2 = variance.sample_one_iteration(residual, rng, 0.0, 0.0)
        if not probit and settings.rescale and after < 0:
            s = Zt.std()
            Zt /= s
            f /= s
            beta /= s
            lin /= s
            forest.multiply_constant(1.0 / s)
            sampler.reconstitute_from_forest(forest, dataset, residual, True)
            if nv:
                var_forest.add_constant(-2.0 * np.log(s) / nv)
                var_sampler.reconstitute_from_forest(var_forest, dataset, residual, False)
            else:
                sigma2 /= s * s
        if nv:
            sd[0] = np.sqrt(dataset.get_variance_weights())
            sigma2 = float(np.mean(sd[0] ** 2))
        else:
            global_config.update_global_error_variance(sigma2)
        if after >= 0:
            kept.append(sigma2)
    return ResponseModel(name, design, container.dump_json_string(), np.array(kept), settings.trees,
                         settings.keep_every, "probit" if probit else "rank", offset,
                         var_container.dump_json_string() if nv else "", nv,
                         linear, np.array(betas) if linear is not None else None)
