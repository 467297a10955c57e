"""Which columns the copula cannot follow: the screen behind ``responses: auto``.

A Gaussian copula carries monotone dependence only: given the others, a column's normal
score is linear in theirs, and so is each level latent of a categorical. The screen asks,
for each ordered column (ordinal, count, continuous, date) and each categorical of at most
MAX_RESPONSE_LEVELS levels, how much of its targets a flexible model predicts that a
linear one does not:

    gain_j = sum over targets (SSE_linear - SSE_boosted) / sum of SST, out of fold
    (5 folds, seeded),

the targets being an ordered column's normal scores, or a categorical's 0/1 indicator
per level; the features the other columns' normal scores (a missing indicator beside each
column with blanks) and one 0/1 feature per categorical level, the linear model least
squares on them, the boosted one the linear fit plus gradient boosting (scikit-learn's
histogram trees, early-stopped on an inner split) of its residuals. For a categorical the
boosting sees the ordered columns only: how its levels go with the other categoricals is
kept exactly by the categorical joint. Boosting from the linear fit keeps the gain near 0
where there is nothing nonlinear; fitting both on the same rows makes the per-row
differences of squared errors paired, whose mean over its standard error is ``z``. A
column passes when gain >= MIN_GAIN and z >= MIN_Z; the MAX_SCREENED with the largest
gain go on (each costs a BART fit). Above SCREEN_ROWS rows a seeded subsample is screened.

A column in a refinement (derived.py: an ordered column and the unordered categorical
that is a step function of it, NHEFS's years of school and education class) is never
chosen by its gain: that gain is the step, which the refinement keeps exactly and BART
would break in some rows (education by BART put some of NHEFS's synthetic rows in a
class their years contradict, the largest source of its propensity AUC).

The outcomes of the report's declared regressions (``report.regressions``) are chosen
whatever their gain, binary ones included (probit BART): the user said that analysis is
the point of the file. A binary is screened only then: a binary the others barely predict
(sex) came out last in the order, modelled given wage, and lost the sex x age
interaction of the wage regression that the copula column keeps.

Order: a response is modelled given the copula's columns and the responses before it,
so the best predictors go first. Each chosen column's importance as a predictor is the
out-of-fold loss in explained share when its features are permuted in the other chosen
columns' models, summed over them; screened columns go in decreasing importance, the
declared outcomes last in their declared order. Then each screened column is screened
again given only the columns before it in that order (the copula's and the earlier
responses); one that is no longer nonlinear there stays in the copula, since the
responses after it carry what made it pass. On the nonlinear survey, age passes (its
spread differs by marital status) but given sex alone it is linear: it stays in the
copula, and marital status and wage are modelled given it.
"""
from __future__ import annotations

import ast
import re
from dataclasses import asdict, dataclass

import numpy as np
from scipy import special, stats
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.linear_model import Ridge
from sklearn.model_selection import KFold
from threadpoolctl import threadpool_limits

from .config import MAX_RESPONSE_LEVELS
from .schema import TableSpec

SCREEN_ROWS = 5000
MIN_GAIN = 0.02
MIN_Z = 3.0
MAX_SCREENED = 5
FOLDS = 5
MIN_ROWS = 100            # observed rows a column needs to be screened (5 folds of early-stopped boosting)
CANDIDATE_KINDS = ("ordinal", "count", "continuous", "date")


@dataclass(frozen=True)
class ColumnScore:
    """One screened column: ``linear_r2`` the out-of-fold R^2 of the linear model on the
    normal scores, ``gain`` the boosted model's out-of-fold R^2 above it, ``z`` the gain
    over its standard error, ``importance`` its summed importance as a predictor of the
    other chosen columns (0 when not chosen), ``reason`` why it is or is not a response."""
    name: str
    kind: str
    linear_r2: float
    gain: float
    z: float
    chosen: bool
    importance: float
    reason: str


@dataclass(frozen=True)
class ResponseScreen:
    """The screen's outcome: ``order`` the chosen responses in modelling order, ``scores``
    one ColumnScore per screened column, ``rows`` the rows it used. Aggregates only."""
    order: tuple[str, ...]
    scores: tuple[ColumnScore, ...]
    rows: int

    def summary(self) -> str:
        """One line for people: which columns BART models and why."""
        if not self.order:
            return "responses: auto chose none (every screened column is followed by the copula)"
        by = {s.name: s for s in self.scores}
        return "modelled by BART: " + "; ".join(f"{name} ({by[name].reason})" for name in self.order)

    def to_dict(self) -> dict:
        return {"order": list(self.order), "rows": self.rows, "scores": [asdict(s) for s in self.scores],
                "rule": {"min_gain": MIN_GAIN, "min_z": MIN_Z, "max_screened": MAX_SCREENED,
                         "folds": FOLDS, "max_rows": SCREEN_ROWS}}

    @classmethod
    def from_dict(cls, d: dict) -> "ResponseScreen":
        return cls(tuple(d["order"]), tuple(ColumnScore(**s) for s in d["scores"]), d["rows"])


def _candidate(col) -> bool:
    """Whether the screen looks at a column: ordered kinds and categoricals of at most
    MAX_RESPONSE_LEVELS levels (a binary only as a declared outcome)."""
    if col.modelled_as == "categorical":
        return len(col.levels) <= MAX_RESPONSE_LEVELS
    return col.kind in CANDIDATE_KINDS


def regression_outcomes(spec: TableSpec) -> list[str]:
    """Modelled columns named on the left of ``report.regressions`` formulas, in order.
    Categoricals of more than MAX_RESPONSE_LEVELS levels are left out (one probit forest a
    level)."""
    names = set(spec.names)
    out = []
    for reg in ((spec.extra.get("report") or {}).get("regressions") or []):
        formula = reg.get("formula", "") if isinstance(reg, dict) else str(reg)
        lhs = formula.split("~", 1)[0] if "~" in formula else ""
        for token in _identifiers(lhs):
            if token in names and token not in out:
                col = spec.column(token)
                if col.modelled_as != "categorical" or len(col.levels) <= MAX_RESPONSE_LEVELS:
                    out.append(token)
    return out


def _identifiers(text: str) -> list[str]:
    """Names in a formula side: Python identifiers, and Q("...") / backquoted names."""
    quoted = re.findall(r"""Q\(\s*["'](.+?)["']\s*\)|`(.+?)`""", text)
    names = [a or b for a, b in quoted]
    try:
        names += [n.id for n in ast.walk(ast.parse(text.strip() or "0", mode="eval")) if isinstance(n, ast.Name)]
    except SyntaxError:
        names += re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)
    return names


def normal_scores(y: np.ndarray) -> np.ndarray:
    """(n,) normal scores of the observed values (average ranks for ties), 0 where missing."""
    out = np.zeros(y.size)
    ok = ~np.isnan(y)
    out[ok] = special.ndtri(stats.rankdata(y[ok]) / (ok.sum() + 1))
    return out


def _blocks(spec: TableSpec, values: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Column name -> its feature block (n, width): normal score (+ missing indicator) or
    one 0/1 column per level (+ missing indicator)."""
    blocks = {}
    for col in spec.columns:
        y = values[col.name]
        miss = np.isnan(y)
        if col.modelled_as == "categorical":
            parts = [(y == level).astype(float) for level in range(len(col.levels))]
        else:
            parts = [normal_scores(y)]
        if miss.any():
            parts.append(miss.astype(float))
        blocks[col.name] = np.column_stack(parts)
    return blocks


@dataclass
class _Fit:
    """Out-of-fold fits of one column: folds [(test rows, linear, boosted per target
    column)], targets (n, L)."""
    target: np.ndarray
    rows: np.ndarray
    features: list[str]
    folds: list


def _targets(col, y: np.ndarray) -> np.ndarray:
    """(observed rows, L) what the screen predicts: the normal scores of an ordered column
    (L = 1), the 0/1 indicator of a binary's upper value (L = 1, a declared outcome), or
    one 0/1 indicator a level of a categorical (L = K)."""
    y = y[~np.isnan(y)]
    if col.modelled_as == "categorical":
        return np.column_stack([(y == level).astype(float) for level in range(len(col.levels))])
    if col.kind == "binary":
        return (y == y.max()).astype(float)[:, None]
    return normal_scores(y)[:, None]


def _fit_column(col, blocks: dict[str, np.ndarray], values: np.ndarray, seed: int,
                ordered: set[str]):
    """Out-of-fold fits of one column's targets on the other columns' blocks; for a
    categorical the boosting sees only the ``ordered`` columns' blocks, since the
    categorical joint already keeps how it goes with the other categoricals."""
    ok = ~np.isnan(values)
    rows = np.flatnonzero(ok)
    T = _targets(col, values)
    features = [c for c in blocks if c != col.name]
    if col.modelled_as == "categorical":
        features = [c for c in features if c in ordered] + [c for c in features if c not in ordered]
    X = np.column_stack([blocks[c][ok] for c in features])
    width = (sum(blocks[c].shape[1] for c in features if c in ordered)
             if col.modelled_as == "categorical" else X.shape[1])
    if width == 0:   # nothing for the boosting to see (a categorical among categoricals only)
        return None, 0.0, 0.0, 0.0
    lin_pred, boost_pred = np.zeros(T.shape), np.zeros(T.shape)
    folds = []
    for train, test in KFold(FOLDS, shuffle=True, random_state=seed).split(X):
        lin = Ridge(alpha=1e-3).fit(X[train], T[train])
        resid = T[train] - _linear(lin, X[train])
        boosts = [HistGradientBoostingRegressor(
            learning_rate=0.1, max_iter=200, max_leaf_nodes=8, min_samples_leaf=40, early_stopping=True,
            validation_fraction=0.2, n_iter_no_change=10, random_state=seed,
        ).fit(X[train, :width], resid[:, l]) for l in range(T.shape[1])]
        lin_pred[test] = _linear(lin, X[test])
        boost_pred[test] = lin_pred[test] + _boosted(boosts, X[test])
        folds.append((test, lin, boosts))
    var = T.var(axis=0).sum()
    diff = (((T - lin_pred) ** 2) - ((T - boost_pred) ** 2)).sum(axis=1)
    gain = diff.mean() / var
    se = diff.std() / np.sqrt(diff.size) / var
    linear_r2 = 1.0 - ((T - lin_pred) ** 2).sum(axis=1).mean() / var
    fit = _Fit(T, rows, features, folds)
    return fit, float(linear_r2), float(gain), float(gain / se) if se > 0 else 0.0


def _linear(lin, X: np.ndarray) -> np.ndarray:
    """(rows, L) linear predictions (Ridge returns (rows,) for a one-column target)."""
    return lin.predict(X).reshape(X.shape[0], -1)


def _boosted(boosts, X: np.ndarray) -> np.ndarray:
    """(rows, L) the boosting of the linear fit's residuals (it sees the first features)."""
    width = boosts[0].n_features_in_
    return np.column_stack([b.predict(X[:, :width]) for b in boosts])


def _predict(lin, boosts, X: np.ndarray) -> np.ndarray:
    """(rows, L) the linear fit plus the boosting of its residuals."""
    return _linear(lin, X) + _boosted(boosts, X)


def _importance(fit: _Fit, blocks: dict[str, np.ndarray], predictor: str, rng: np.random.Generator) -> float:
    """Out-of-fold loss in explained share of ``fit``'s targets when ``predictor``'s
    feature block is permuted."""
    X = np.column_stack([blocks[c][fit.rows] for c in fit.features])
    start = sum(blocks[c].shape[1] for c in fit.features[:fit.features.index(predictor)])
    width = blocks[predictor].shape[1]
    loss = 0.0
    for test, lin, boosts in fit.folds:
        Xt = X[test]
        base = _predict(lin, boosts, Xt)
        Xp = Xt.copy()
        Xp[:, start:start + width] = Xt[rng.permutation(len(test)), start:start + width]
        perm = _predict(lin, boosts, Xp)
        t = fit.target[test]
        loss += ((t - perm) ** 2).sum() - ((t - base) ** 2).sum()
    return float(loss / fit.target.shape[0] / fit.target.var(axis=0).sum())


def screen_responses(spec: TableSpec, values: dict[str, np.ndarray], seed: int = 0,
                     linked: dict[str, str] | None = None) -> ResponseScreen:
    """Screen ``values`` (model values per column, (n,) each) for columns the copula
    cannot follow; see the module docstring. ``linked`` maps the columns of refinements
    (an ordered column and the unordered categorical that is a function of it) to their
    partner: the step between them is kept exactly, so neither is chosen unless it is a
    declared outcome. One thread: the boosting's OpenMP threads spin when another process
    holds a core, and a screen then takes many times as long."""
    with threadpool_limits(1):
        return _screen(spec, values, seed, linked or {})


def _screen(spec: TableSpec, values: dict[str, np.ndarray], seed: int, linked: dict[str, str]) -> ResponseScreen:
    outcomes = regression_outcomes(spec)
    n = len(next(iter(values.values())))
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(n, SCREEN_ROWS, replace=False)) if n > SCREEN_ROWS else np.arange(n)
    sub = {name: values[name][rows] for name in spec.names}
    blocks = _blocks(spec, sub)
    candidates = [c for c in spec.columns if c.name in outcomes or _candidate(c)]
    ordered = {c.name for c in spec.columns if c.modelled_as == "rank"}
    fits, raw = {}, {}
    for col in candidates:
        y = sub[col.name]
        if np.unique(y[~np.isnan(y)]).size < 2 or np.count_nonzero(~np.isnan(y)) < MIN_ROWS:
            continue
        fit, *scores = _fit_column(col, blocks, y, seed, ordered)
        if fit is not None:
            fits[col.name], raw[col.name] = fit, scores
    passing = sorted((name for name, (_, gain, z) in raw.items()
                      if gain >= MIN_GAIN and z >= MIN_Z and name not in outcomes and name not in linked),
                     key=lambda name: -raw[name][1])
    screened = passing[:MAX_SCREENED]
    chosen = screened + [name for name in outcomes if name in fits]
    importance = {name: sum(_importance(fits[other], blocks, name, rng) for other in chosen if other != name)
                  for name in chosen}
    order = tuple(sorted(screened, key=lambda name: -importance[name])) + tuple(
        name for name in outcomes if name in fits)
    given = {}   # screened column -> (gain, z) given only the columns before it
    for i, name in enumerate(order):
        before = [c for c in spec.names if c not in order] + list(order[:i])
        if name in outcomes or not before:
            continue
        _, _, *given[name] = _fit_column(spec.column(name), {c: blocks[c] for c in before + [name]},
                                         sub[name], seed, ordered)
    order = tuple(name for name in order if name in outcomes
                  or (name in given and given[name][0] >= MIN_GAIN and given[name][1] >= MIN_Z))
    scores = []
    for col in candidates:
        if col.name not in raw:
            continue
        linear_r2, gain, z = raw[col.name]
        if col.name in outcomes:
            reason = "outcome of a declared regression"
        elif col.name in screened and col.name not in order:
            after = (f"{given[col.name][0]:+.3f} given the columns before it in the order"
                     if col.name in given else "no column comes before it")
            reason = (f"nonlinear in the others ({gain:+.3f} R^2 over linear), but not in the columns modelled "
                      f"before it ({after}): left to the copula, the later responses carry the rest")
        elif col.name in screened:
            reason = f"nonlinear in the others: {gain:+.3f} R^2 over linear (z {z:.1f})"
        elif col.name in linked:
            reason = (f"{gain:+.3f} R^2 over linear, from its exact link with {linked[col.name]}: kept "
                      "exactly (the ordered column is drawn again within the categorical's level)")
        elif col.name in passing:
            reason = f"{gain:+.3f} R^2 over linear, but only the {MAX_SCREENED} largest gains are modelled"
        else:
            reason = f"followed by the copula: {gain:+.3f} R^2 over linear (z {z:.1f})"
        scores.append(ColumnScore(col.name, col.kind, round(linear_r2, 4), round(gain, 4), round(z, 2),
                                  col.name in order, round(importance.get(col.name, 0.0), 4), reason))
    return ResponseScreen(order, tuple(scores), int(rows.size))
