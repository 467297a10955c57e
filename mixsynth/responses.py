"""Nonlinear responses: rank-likelihood BART (method.md section 6), probit BART for binaries.

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
(``rescale=False`` drops that step, for comparison). Measured by hand on the paper-layout
reading score, started at sigma^2 = 1: sigma^2 was 0.54 after one sweep and 0.48 after five,
its stationary level, with or without the rescaling; tests/test_responses.py checks on a
tied Friedman response that the explained share of latent variance matches the truth
after the burn-in sweeps and that the kept sigma^2 draws are stationary.

The error variance of an ordered response depends on x too (``variance_trees`` > 0):
log sigma^2(x) is a forest of stochtree's log-linear variance leaves (Murray 2021,
"Log-linear Bayesian additive regression trees for multinomial logistic and count
regression models", JASA; the heteroskedastic BART of stochtree), sampled after the mean
forest each sweep with the global variance fixed at 1; the latent is drawn with each row's
own sd, and a burn-in rescaling shifts the log-variance forest by -2 log s. Measured on
the nonlinear survey with age modelled given marital status (normal-score sds 0.52 / 0.42
/ 0.53 in the three groups), the married quadratic of ``married ~ age + I(age**2)`` moved
from CIO 0.38 to 0.45 on one table, the wage regression's terms from 0.58-0.79 to
0.65-0.90; on CPS 1988 with nothing declared, the log-wage regression's mean CIO from 0.39
to 0.63 (one fit, 5 files).

The trees shrink linear effects: BART's posterior mean is a sum of many small steps, and
where the signal is weak against the noise its slope in a number is pulled towards 0
(NHEFS's weight gain given age and weight: -25% and -26% of the normal scores' least
squares slopes, 1.4 and 1.5 standard errors; the synthetic files' regressions lost 40% of
the age effect). So the mean holds a linear term beside the trees (``linear``), as in
semiparametric BART (Zeldow, Lo Re and Roy 2019, "A semiparametric modeling approach
using Bayesian Additive Regression Trees with an application to evaluate heterogeneous
treatment effects", Annals of Applied Statistics; Prado, Moral and Parnell 2021,
"Semi-parametric Bayesian additive regression trees", on the trees sharing the linear
term's covariates): z_i = b_i' beta + f(x_i) + e_i, b_i the
numeric features standardized (a blank at 0; the trees split blanks off), beta ~ N(0, I)
drawn each sweep given z - f by weighted least squares (weights 1 / sigma^2(x_i)), the
trees given z - b' beta. On those two slopes: -8% and -5%.

A binary response takes probit BART instead (Chipman, George and McCulloch 2010, section
5; Albert and Chib 1993): z_i ~ N(offset + f(x_i), 1) truncated to the side its 0/1 value
gives, the error variance fixed at 1, offset = Phi^-1 of the observed share of ones. Its
two tie groups would pin a rank-likelihood threshold between thousands of latents (moved
O(1/n) a sweep); the probit's threshold is fixed at 0 and the intercept is the offset plus
the forest.

Cost: an MCMC sweep of 200 trees on 19,364 rows and 31 features takes about 0.07 s, a
grow-from-root sweep about 0.9 s (measured here). The defaults (5 grow-from-root sweeps
opening 50 burn-in sweeps, then 200 kept, every 4th forest stored: 50 forests) take about
a sixth of the earlier 100 + 1,000 sweeps; synthesis uses the posterior mean of f over the
stored forests, which 50 forests estimate well. Above ``max_rows`` rows the fit uses a
seeded subsample of that many rows (f is a regression function: 50,000 rows pin it down).
"""
from dataclasses import asdict, dataclass
from functools import cached_property

import numpy as np
from scipy import special
from stochtree import Dataset, Forest, ForestContainer, ForestSampler, GlobalVarianceModel, Residual, RNG
from stochtree.config import ForestModelConfig, GlobalModelConfig

from .config import BartSettings
from .constraints import build_constraints, draw_latent, initial_latent
from .latent_columns import LatentColumn
from .kernels.truncnorm import draw_probit, seed_streams

@dataclass(frozen=True)
class Design:
    """How model values become BART features. ``features`` are input columns; ``levels``
    gives, per feature, the level count of an unordered categorical (one 0/1 feature per
    level; stochtree 0.4.5's grow-from-root sampler crashes on its own categorical splits)
    or 0 for a number; ``fill`` stands for a missing number, below the observed minimum so
    a tree can split it off (None for a category: missing is all zeros)."""
    features: tuple[str, ...]
    levels: tuple[int, ...]
    fill: tuple[float | None, ...]

    @classmethod
    def from_values(cls, values: dict[str, np.ndarray], features: list[str],
                    unordered: dict[str, int]) -> "Design":
        """``unordered``: categorical column -> its number of levels."""
        levels = tuple(unordered.get(name, 0) for name in features)
        fill = []
        for name, k in zip(features, levels):
            lo, hi = np.nanmin(values[name]), np.nanmax(values[name])
            fill.append(None if k else float(lo - max(hi - lo, 1.0)))
        return cls(tuple(features), levels, tuple(fill))

    def matrix(self, values: dict[str, np.ndarray]) -> np.ndarray:
        """(n, number of features after one-hot coding) float matrix."""
        cols = []
        for name, k, fill in zip(self.features, self.levels, self.fill):
            y = values[name]
            if k:
                cols += [(y == level).astype(float) for level in range(k)]
            else:
                cols.append(np.where(np.isnan(y), fill, y))
        return np.ascontiguousarray(np.column_stack(cols), dtype=float)


@dataclass(frozen=True)
class Rows:
    """The BART features of some rows, built only when a fit needs them: ``values`` holds
    each of ``design.features`` at those rows, (n,) model values. Indexing selects rows and
    stays lazy, so a fit on a subsample never builds the one-hot matrix of every row (KDD
    census: ~450 features, 1.1 GB a response on the whole file, five of them at once in the
    parent and again in the workers: the fit's peak was 14 GB)."""
    design: Design
    values: dict

    def __getitem__(self, rows) -> "Rows":
        return Rows(self.design, {k: v[rows] for k, v in self.values.items()})

    def matrix(self) -> np.ndarray:
        return self.design.matrix(self.values)


@dataclass(frozen=True)
class LinearPart:
    """The linear term of a response: its basis is the numeric features (``columns``, their
    indices in the feature matrix) standardized by the fit rows' observed ``center`` and
    ``scale``, a blank (the design's ``fill``) at 0, the mean."""
    columns: tuple[int, ...]
    center: tuple[float, ...]
    scale: tuple[float, ...]
    fill: tuple[float, ...]

    @classmethod
    def fit(cls, X: np.ndarray, design: Design) -> "LinearPart | None":
        """The part for feature matrix X (n, features) of ``design``; None without a numeric
        feature that varies."""
        parts = []   # (column, center, scale, fill) of each numeric feature that varies
        at = 0
        for k, value in zip(design.levels, design.fill):
            x = X[:, at][X[:, at] != value] if not k else np.zeros(0)
            if x.size > 1 and x.std() > 0:
                parts.append((at, float(x.mean()), float(x.std()), float(value)))
            at += k or 1
        return cls(*map(tuple, zip(*parts))) if parts else None

    def basis(self, X: np.ndarray) -> np.ndarray:
        """(n, len(columns)) standardized numeric features of X, blanks 0."""
        x = X[:, list(self.columns)]
        return np.where(x == np.array(self.fill), 0.0, (x - np.array(self.center)) / np.array(self.scale))


def _draw_beta(B: np.ndarray, weight: np.ndarray, r: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """beta ~ its conditional given residuals r (n,) = B beta + e, e_i ~ N(0, 1 / weight_i),
    under beta ~ N(0, I): B (n, q) the standardized basis."""
    BW = B * weight[:, None]
    P = BW.T @ B + np.eye(B.shape[1])
    L = np.linalg.cholesky(P)
    mean = np.linalg.solve(L.T, np.linalg.solve(L, BW.T @ r))
    return mean + np.linalg.solve(L.T, rng.standard_normal(B.shape[1]))


@dataclass
class ResponseModel:
    """A fitted response: its design, stored forests (stochtree JSON: every
    ``keep_every``-th kept draw) and the error variance of every kept draw (with
    ``variance_json``, the stored forests of the log error variance, and sigma2 the mean
    over the rows of each kept draw's variance), all on the standardized latent scale
    (``link="rank"``), or on the probit scale, where the latent is ``offset`` + f + N(0, 1)
    (``link="probit"``, sigma2 all ones)."""
    name: str
    design: Design
    forests_json: str
    sigma2: np.ndarray
    trees: int
    keep_every: int
    link: str = "rank"
    offset: float = 0.0
    variance_json: str = ""
    variance_trees: int = 0
    linear: LinearPart | None = None
    beta: np.ndarray | None = None   # (stored forests, basis columns): the linear term's draws

    @cached_property
    def forests(self) -> ForestContainer:
        container = ForestContainer(self.trees, 1, True, False)
        container.load_from_json_string(self.forests_json)
        return container

    @cached_property
    def variance_forests(self) -> ForestContainer | None:
        if not self.variance_json:
            return None
        container = ForestContainer(self.variance_trees, 1, True, True)
        container.load_from_json_string(self.variance_json)
        return container

    @staticmethod
    def _at(container: ForestContainer, X: np.ndarray, draw: int | None) -> np.ndarray:
        """(n,) predictions of the stored forests at X: their mean, or stored forest ``draw``
        alone (modulo their number; only that forest is evaluated)."""
        dataset = Dataset()
        dataset.add_covariates(X)
        if draw is None:
            return container.predict(dataset).mean(axis=1)     # (n, stored) -> (n,)
        raw = container.predict_raw_single_forest(dataset, draw % container.num_samples()).ravel()
        return np.exp(raw) if container.is_exponentiated else raw

    def predict(self, X: np.ndarray, draw: int | None = None) -> np.ndarray:
        """f at the rows of X (n, features), the trees plus the linear term: the posterior
        mean over the stored draws, or stored draw ``draw`` (modulo their number)."""
        f = self._at(self.forests, X, draw)
        if self.linear is not None:
            beta = self.beta.mean(axis=0) if draw is None else self.beta[draw % self.beta.shape[0]]
            f += self.linear.basis(X) @ beta
        return f

    def error_sd(self, X: np.ndarray, draw: int | None = None) -> np.ndarray:
        """The latent error sd at the rows of X, (n,): from the variance forests (posterior
        mean of the variance, or stored forest ``draw``), else one sd for every row."""
        if self.variance_forests is not None:
            return np.sqrt(self._at(self.variance_forests, X, draw))
        stored = self.forests.num_samples()
        sigma2 = self.sigma2.mean() if draw is None else self.sigma2[(draw % stored) * self.keep_every]
        return np.full(X.shape[0], np.sqrt(sigma2))

    def draw_latent(self, X: np.ndarray, rng: np.random.Generator, draw: int | None = None,
                    seen: np.ndarray | None = None) -> np.ndarray:
        """Latent responses for rows X and their probabilities under the latent marginal:
        z = f(x) + sigma(x) e with posterior means (the paper) or one posterior draw, then
        u = F_z(z), F_z the mixture over the ``seen`` rows ((n,) bool, default all: the rows
        whose value is not blanked, whose values the real marginal describes) of
        N(f(x), sigma(x)^2), at most 1,000 of them spread evenly over the order of f.
        Returns u, (n,)."""
        f = self.predict(X, draw)
        sd = self.error_sd(X, draw)
        z = f + sd * rng.standard_normal(f.size)
        pool = np.flatnonzero(seen) if seen is not None and np.any(seen) else np.arange(f.size)
        rows = pool[np.argsort(f[pool], kind="stable")][
            np.linspace(0, pool.size - 1, min(pool.size, 1000)).round().astype(int)]
        grid = np.linspace(z.min() - 1e-9, z.max() + 1e-9, 2048)
        cdf = special.ndtr((grid[:, None] - f[None, rows]) / sd[None, rows]).mean(axis=1)
        return np.clip(np.interp(z, grid, cdf), 1e-12, 1.0 - 1e-12)

    def draw_values(self, X: np.ndarray, marginal, rng: np.random.Generator, draw: int | None = None,
                    seen: np.ndarray | None = None) -> np.ndarray:
        """Model values of the response for rows X (n, features): through ``marginal``'s
        quantile function (rank link; its probabilities over the ``seen`` rows, see
        draw_latent), or 1 where offset + f + N(0, 1) > 0 (probit)."""
        if self.link == "probit":
            f = self.predict(X, draw) + self.offset
            return (f + rng.standard_normal(f.size) > 0).astype(float)
        return marginal.ppf(self.draw_latent(X, rng, draw, seen))

    def to_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        meta = {"name": self.name, "design": asdict(self.design), "trees": self.trees,
                "keep_every": self.keep_every, "link": self.link, "offset": self.offset,
                "variance_trees": self.variance_trees,
                "linear": None if self.linear is None else asdict(self.linear)}
        arrays = {"sigma2": self.sigma2, "forests": np.array(self.forests_json),
                  "variance": np.array(self.variance_json)}
        if self.linear is not None:
            arrays["beta"] = self.beta
        return meta, arrays

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> "ResponseModel":
        design = Design(**{k: tuple(v) for k, v in meta["design"].items()})
        variance = str(arrays["variance"]) if "variance" in arrays else ""
        linear = meta.get("linear")
        linear = None if linear is None else LinearPart(**{k: tuple(v) for k, v in linear.items()})
        return cls(meta["name"], design, str(arrays["forests"]), arrays["sigma2"], meta["trees"],
                   meta["keep_every"], meta.get("link", "rank"), meta.get("offset", 0.0),
                   variance, meta.get("variance_trees", 0), linear, arrays.get("beta"))


@dataclass
class CategoricalResponse:
    """A fitted unordered categorical response, by continuation-ratio probit BART: level
    ``order[k]`` against the levels after it, on the rows holding none of ``order[:k]``,
    one probit ResponseModel ``parts[k]`` each (K - 1 for K levels; the last level is what
    is left). Codes are drawn level by level, so every row gets exactly one."""
    name: str
    design: Design
    order: tuple[int, ...]
    parts: list[ResponseModel]
    link: str = "categorical"

    def draw_values(self, X: np.ndarray, marginal, rng: np.random.Generator, draw: int | None = None,
                    seen: np.ndarray | None = None) -> np.ndarray:
        """Level codes (n,) float for rows X (n, features); ``marginal`` and ``seen`` are unused."""
        codes = np.full(X.shape[0], float(self.order[-1]))
        left = np.arange(X.shape[0])
        for level, part in zip(self.order, self.parts):
            if not left.size:
                break
            hit = part.draw_values(X[left], None, rng, draw) == 1.0
            codes[left[hit]] = level
            left = left[~hit]
        return codes

    def to_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        meta = {"name": self.name, "link": self.link, "design": asdict(self.design),
                "order": list(self.order), "parts": []}
        arrays = {}
        for k, part in enumerate(self.parts):
            part_meta, part_arrays = part.to_state()
            meta["parts"].append(part_meta)
            arrays.update({f"part{k}/{key}": arr for key, arr in part_arrays.items()})
        return meta, arrays


def response_from_state(meta: dict, arrays: dict[str, np.ndarray]) -> ResponseModel | CategoricalResponse:
    """A saved response (ResponseModel.to_state or CategoricalResponse.to_state)."""
    if meta.get("link") != "categorical":
        return ResponseModel.from_state(meta, arrays)
    parts = [ResponseModel.from_state(m, {key.split("/", 1)[1]: arr for key, arr in arrays.items()
                                          if key.startswith(f"part{k}/")})
             for k, m in enumerate(meta["parts"])]
    design = Design(**{k: tuple(v) for k, v in meta["design"].items()})
    return CategoricalResponse(meta["name"], design, tuple(meta["order"]), parts)


def fit_categorical(name: str, y: np.ndarray, X: np.ndarray, design: Design, settings: BartSettings,
                    seed: np.random.SeedSequence) -> CategoricalResponse:
    """Continuation-ratio probit BART for level codes ``y`` (n,), NaN missing (left out:
    their blanks come from the copula's missingness indicator), on X (n, q) or its Rows: the most
    frequent level first, so the first splits have the most rows."""
    ok = ~np.isnan(y)
    y, X = y[ok], X[ok]
    levels, counts = np.unique(y, return_counts=True)
    order = tuple(int(v) for v in levels[np.argsort(-counts, kind="stable")])
    parts = []
    left = np.ones(y.size, bool)
    for level, s in zip(order[:-1], seed.spawn(len(order) - 1)):
        parts.append(fit_response(name, (y[left] == level).astype(float), X[left], design, settings, s, probit=True))
        left &= y != level
    return CategoricalResponse(name, design, order, parts)


def fit_any(name: str, y: np.ndarray, X: np.ndarray, design: Design, settings: BartSettings,
            seed: np.random.SeedSequence, kind: str) -> ResponseModel | CategoricalResponse:
    """The response model for a column of ``kind``: "categorical" (unordered) ->
    fit_categorical, "binary" -> probit BART, any other -> rank-likelihood BART."""
    if kind == "categorical":
        return fit_categorical(name, y, X, design, settings, seed)
    return fit_response(name, y, X, design, settings, seed, probit=kind == "binary")


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
