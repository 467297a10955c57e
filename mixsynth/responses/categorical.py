"""An unordered categorical response (`CategoricalResponse`, continuation-ratio probit
BART), and the two entry points that choose between it and one `ResponseModel`:
`fit_any` (fit a column of a given kind) and `response_from_state` (reload either).
"""
from dataclasses import asdict, dataclass

import numpy as np

from .bart import BartSettings, fit_response
from .design import Design
from .response_model import ResponseModel


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
    order = tuple(int(v) for v in continuation_order(y)[0])
    parts = []
    left = np.ones(y.size, bool)
    for level, s in zip(order[:-1], seed.spawn(len(order) - 1)):
        parts.append(fit_response(name, (y[left] == level).astype(float), X[left], design, settings, s, probit=True))
        left &= y != level
    return CategoricalResponse(name, design, order, parts)


def continuation_order(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The levels of codes ``y`` (n,), none missing, most frequent first (ties by code), and
    their counts: the order of the continuation-ratio parts."""
    levels, counts = np.unique(y, return_counts=True)
    first = np.argsort(-counts, kind="stable")
    return levels[first], counts[first]


def continuation_rows(y: np.ndarray) -> np.ndarray:
    """The rows each continuation-ratio part of codes ``y`` (n,), none missing, is fitted on
    (one part per level but the last)."""
    counts = continuation_order(y)[1]
    return (y.size - np.concatenate([[0], np.cumsum(counts)]))[:counts.size - 1]


def fit_any(name: str, y: np.ndarray, X: np.ndarray, design: Design, settings: BartSettings,
            seed: np.random.SeedSequence, kind: str) -> ResponseModel | CategoricalResponse:
    """The response model for a column of ``kind``: "categorical" (unordered) ->
    fit_categorical, "binary" -> probit BART, any other -> rank-likelihood BART."""
    if kind == "categorical":
        return fit_categorical(name, y, X, design, settings, seed)
    return fit_response(name, y, X, design, settings, seed, probit=kind == "binary")
