"""The BART features of a response: how model values become a feature matrix (`Design`),
the rows of a fit built only when needed (`Rows`), and the linear term's basis
(`LinearPart`).
"""
from dataclasses import dataclass

import numpy as np


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
    stays lazy, so a fit on a subsample never builds the one-hot matrix of every row (on a
    wide census file those matrices, one a response in the parent and again in the workers,
    set the fit's peak memory)."""
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

