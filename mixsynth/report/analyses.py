"""Level-3 utility of a synthetic table (docs/evaluation.md): the group statistics users
will compute, in the real and the synthetic file side by side (regressions.py fits their
regressions, utility.py the classifiers of general utility and TSTR).

Every function returns JSON-ready aggregates (plain floats, ints, strings; None, never NaN);
no row of either table is ever returned (``finite``: a number as the three modules return it).
"""
import numpy as np
import pandas as pd
from scipy import stats

from ..tableio import InputError

BOOTSTRAP_RESAMPLES = 200
BOOTSTRAP_SEED = 0
Z95 = float(stats.norm.ppf(0.975))


def finite(x):
    """A plain float, or None when missing or not finite."""
    if x is None:
        return None
    x = float(x)
    return x if np.isfinite(x) else None


def _plain(v):
    """A JSON-ready group key value."""
    if v is None or v is pd.NA or v is pd.NaT or (isinstance(v, float) and np.isnan(v)):
        return None
    if isinstance(v, np.generic):
        v = v.item()
    return v if isinstance(v, (bool, int, float)) else str(v)


def _weighted_quantile(x: np.ndarray, w: np.ndarray, q: float) -> float:
    """Quantile of the weighted empirical distribution (inverse of the weighted CDF,
    averaging at an exact step, so equal weights give the usual median)."""
    order = np.argsort(x, kind="stable")
    x, w = x[order], w[order]
    cw = np.cumsum(w) / w.sum()
    i = int(np.searchsorted(cw, q, side="left"))
    if i < len(x) - 1 and np.isclose(cw[i], q):
        return float((x[i] + x[i + 1]) / 2)
    return float(x[min(i, len(x) - 1)])


def _point(stat: str, x: np.ndarray, w, q: float) -> float:
    if stat in ("rate", "mean"):
        return float(np.average(x, weights=w))
    qq = 0.5 if stat == "median" else q
    return float(np.quantile(x, qq)) if w is None else _weighted_quantile(x, w, qq)


def _standard_error(stat: str, x: np.ndarray, w, q: float):
    """Sampling error of the statistic; weighted forms use n_eff = (sum w)^2 / sum w^2."""
    n = len(x)
    if n < 2:
        return None
    n_eff = n if w is None else w.sum() ** 2 / (w ** 2).sum()
    if stat == "rate":
        p = _point(stat, x, w, q)
        return float(np.sqrt(p * (1 - p) / n_eff))
    if stat == "mean":
        m = _point(stat, x, w, q)
        ww = np.ones(n) if w is None else w
        var = np.sum(ww * (x - m) ** 2) / ww.sum() * n_eff / (n_eff - 1)
        return float(np.sqrt(var / n_eff))
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    boot = []
    for _ in range(BOOTSTRAP_RESAMPLES):
        i = rng.integers(0, n, n)
        boot.append(_point(stat, x[i], None if w is None else w[i], q))
    return float(np.std(boot, ddof=1))


def _values(df: pd.DataFrame, stat: str, column: str, weight, level=None):
    """Non-missing values of ``column`` (as floats; for a rate with ``level``, 1.0 where the
    value equals the level) and their weights."""
    cols = [column] + ([weight] if weight else [])
    d = df[cols].dropna()
    x = d[column]
    if stat == "rate" and level is not None:
        x = (x.astype(str) == str(level)) if not pd.api.types.is_numeric_dtype(x) else (x == level)
    elif stat == "rate":
        x = x.astype(bool) if x.dtype == bool or str(x.dtype) == "boolean" else x
        if not pd.api.types.is_numeric_dtype(x) or not set(pd.unique(x.astype(float))) <= {0.0, 1.0}:
            raise InputError(f"group statistic: a rate of '{column}' needs a 0/1 or boolean column; "
                             f"for another column name the level counted, e.g. level: yes")
    x = x.astype(float).to_numpy()
    w = d[weight].astype(float).to_numpy() if weight else None
    return x, w


def group_statistic(real: pd.DataFrame, syn: pd.DataFrame, stat: str, column: str, by=None,
                    where=None, weight=None, q: float = 0.5, min_cell: int = 10, level=None) -> list:
    """A user statistic per group in both files, with the real file's sampling error.

    stat: "rate" (mean of a 0/1 or boolean column), "mean", "median" or "quantile" (at q).
    where: pandas query string applied to both tables; by: a column or list of columns;
    weight: survey-weight column (weighted estimates; s.e. with the effective sample size);
    level: for a rate of a column that is not 0/1, the value counted (the share equal to it).
    The s.e. is s/sqrt(n) for a mean, sqrt(p(1-p)/n) for a rate, and a bootstrap s.e.
    (200 resamples, fixed seed) for a median or quantile. Rows missing the column (or the
    weight) are dropped. Each entry: group, real, synthetic, difference (syn - real),
    n_real, n_synthetic, se_real and within_error = |difference| <= 1.96 se_real. A group with
    1 to ``min_cell - 1`` real rows shows no real estimate (small-cell rule: a median of three
    rows is a recorded value): real, difference, se_real and within_error are None.
    """
    if stat not in ("rate", "mean", "median", "quantile"):
        raise ValueError(f"unknown stat {stat!r}")
    by = [] if by is None else [by] if isinstance(by, str) else list(by)
    tables = [t.query(where) if where else t for t in (real, syn)]
    groups = [{tuple(_plain(v) for v in k): g for k, g in t.groupby(by, dropna=False, sort=False)}
              if by else {(): t} for t in tables]
    keys = list(groups[0]) + [k for k in groups[1] if k not in groups[0]]
    out = []
    for key in sorted(keys, key=lambda k: tuple(str(v) for v in k)):
        row = {"group": dict(zip(by, key)), "stat": stat, "column": column}
        if stat == "quantile":
            row["q"] = float(q)
        res = [_values(g[key], stat, column, weight, level) if key in g else (np.array([]), None)
               for g in groups]
        (xr, wr), (xs, ws) = res
        real_v = _point(stat, xr, wr, q) if len(xr) else None
        syn_v = _point(stat, xs, ws, q) if len(xs) else None
        se = _standard_error(stat, xr, wr, q)
        if 0 < len(xr) < min_cell:
            real_v = se = None
        diff = None if real_v is None or syn_v is None else syn_v - real_v
        row.update(real=finite(real_v), synthetic=finite(syn_v), difference=finite(diff),
                   n_real=int(len(xr)), n_synthetic=int(len(xs)), se_real=finite(se),
                   within_error=None if diff is None or finite(se) is None else bool(abs(diff) <= Z95 * se))
        out.append(row)
    return out
