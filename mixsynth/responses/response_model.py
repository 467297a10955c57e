"""A fitted response (`ResponseModel`): its stored forests, linear term and error variance;
predictions, the synthetic values they give, and the state a model file saves.
"""
from dataclasses import asdict, dataclass
from functools import cached_property

import numpy as np
from scipy import special
from stochtree import Dataset, ForestContainer

from .design import Design, LinearPart


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
