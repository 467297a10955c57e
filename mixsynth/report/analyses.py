"""Level-3 and general utility of a synthetic table (docs/evaluation.md): the target
analyses users will run, fitted to the real and the synthetic file side by side.

Every function returns JSON-ready aggregates (plain floats, ints, strings; None, never NaN);
no row of either table is ever returned.
"""
import re

import numpy as np
import pandas as pd
import statsmodels.formula.api as smf
from scipy import stats
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, r2_score, roc_auc_score
from sklearn.model_selection import StratifiedKFold

from ..tableio import InputError

BOOTSTRAP_RESAMPLES = 200
BOOTSTRAP_SEED = 0
PROPENSITY_FOLDS = 5
PROPENSITY_MAX_ROWS = 50_000  # per side; larger tables are subsampled (seeded)
Z95 = float(stats.norm.ppf(0.975))


def _num(x):
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


# ---------------------------------------------------------------- group statistics

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
        row.update(real=_num(real_v), synthetic=_num(syn_v), difference=_num(diff),
                   n_real=int(len(xr)), n_synthetic=int(len(xs)), se_real=_num(se),
                   within_error=None if diff is None or _num(se) is None else bool(abs(diff) <= Z95 * se))
        out.append(row)
    return out


# ---------------------------------------------------------------- regressions

def ci_overlap(lower_real: float, upper_real: float, lower_syn: float, upper_syn: float):
    """Confidence-interval overlap of Karr et al. (2006): the overlap's length as a share of
    each interval, averaged; 1 identical, negative when disjoint; None for a zero-width interval."""
    if upper_real <= lower_real or upper_syn <= lower_syn:
        return None
    ov = min(upper_real, upper_syn) - max(lower_real, lower_syn)
    return 0.5 * (ov / (upper_real - lower_real) + ov / (upper_syn - lower_syn))


def std_sq_diff(b_real: float, b_syn: float, se_real: float):
    """Standardized squared difference ((b_real - b_syn) / se_real)^2 (the paper's "MSE")."""
    return ((b_real - b_syn) / se_real) ** 2 if se_real > 0 else None


def _formula_columns(df: pd.DataFrame, formula: str):
    """Columns named in the formula: (response columns, predictor columns, columns inside C())."""
    lhs, rhs = formula.split("~", 1)
    names = lambda s: [c for c in dict.fromkeys(re.findall(r"[A-Za-z_]\w*", s)) if c in df.columns]
    return names(lhs), names(rhs), set(re.findall(r"C\(\s*([A-Za-z_]\w*)", rhs))


def _prepare(df: pd.DataFrame, formula: str, standardize: bool) -> pd.DataFrame:
    """Complete cases on the formula's columns; numeric non-binary predictors scaled to
    mean 0, sd 1 within this table (binary 0/1 and C() columns untouched)."""
    lhs, rhs, cats = _formula_columns(df, formula)
    d = df[list(dict.fromkeys(lhs + rhs))].dropna().copy()
    if standardize:
        for c in rhs:
            x = d[c]
            if c in lhs or c in cats or x.dtype == bool or not pd.api.types.is_numeric_dtype(x):
                continue
            if set(pd.unique(x)) <= {0, 1}:
                continue
            sd = x.std()
            if sd > 0:
                d[c] = (x - x.mean()) / sd
    return d


def _fit(df: pd.DataFrame, formula: str, family: str, standardize: bool):
    """Coefficients, standard errors, 95% intervals and the row count of one fit."""
    d = _prepare(df, formula, standardize)
    if family == "ols":
        res = smf.ols(formula, d).fit()
    elif family == "logit":
        res = smf.logit(formula, d).fit(disp=0)
    else:
        raise ValueError(f"unknown family {family!r}")
    ci = res.conf_int(0.05)
    return {"b": res.params, "se": res.bse, "lo": ci.iloc[:, 0], "hi": ci.iloc[:, 1], "n": int(res.nobs)}


def _compare_term(term, r, s):
    """One coefficient, real (b, se, lo, hi) against synthetic (b, lo, hi); either may be None."""
    get = lambda d, k: None if d is None else _num(d[k])
    row = {"term": term, "real": get(r, "b"), "real_lower": get(r, "lo"), "real_upper": get(r, "hi"),
           "synthetic": get(s, "b"), "synthetic_lower": get(s, "lo"), "synthetic_upper": get(s, "hi")}
    ok = None not in row.values() and get(r, "se") is not None
    row.update(std_sq_diff=_num(std_sq_diff(r["b"], s["b"], r["se"])) if ok else None,
               cio=_num(ci_overlap(r["lo"], r["hi"], s["lo"], s["hi"])) if ok else None,
               sign_agree=bool(np.sign(r["b"]) == np.sign(s["b"])) if ok else None)
    return row


def _summary(terms: list) -> dict:
    """Averages over the coefficients compared in both files."""
    mean = lambda k: _num(np.mean(v)) if (v := [t[k] for t in terms if t[k] is not None]) else None
    return {"mean_cio": mean("cio"), "mean_std_sq_diff": mean("std_sq_diff"),
            "sign_agreement": mean("sign_agree"),
            "n_terms": sum(t["cio"] is not None for t in terms),
            "missing_terms": sum(t["real"] is None or t["synthetic"] is None for t in terms)}


def _term(fit, t):
    """Coefficient t of a fit, or None when the fit lacks it."""
    return None if t not in fit["b"].index else {k: fit[k][t] for k in ("b", "se", "lo", "hi")}


def regression(real: pd.DataFrame, syn: pd.DataFrame, formula: str, family: str = "ols",
               standardize: bool = True, bayesian: dict | None = None) -> dict:
    """Fit a statsmodels formula ("ols" or "logit") to both files and compare coefficients:
    95% intervals, std. squared difference, CIO (Karr et al. 2006), sign agreement, and
    their averages. Numeric non-binary predictors are standardized within each table.
    Terms present in one file only are listed with None and counted in missing_terms.

    With ``bayesian`` (keyword arguments of horseshoe.fit_horseshoe: draws, tune, chains,
    seed), the fits are the paper's horseshoe regressions and the intervals 95% credible
    intervals (posterior sd in place of the standard error)."""
    if bayesian is None:
        fr, fs = _fit(real, formula, family, standardize), _fit(syn, formula, family, standardize)
    else:
        from .horseshoe import fit_horseshoe
        fr, fs = (fit_horseshoe(_prepare(d, formula, standardize), formula, family, **bayesian)
                  for d in (real, syn))
    names = list(fr["b"].index) + [t for t in fs["b"].index if t not in fr["b"].index]
    terms = [_compare_term(t, _term(fr, t), _term(fs, t)) for t in names]
    return {"formula": formula, "family": family, "standardized": standardize,
            "n_real": fr["n"], "n_synthetic": fs["n"], "terms": terms, **_summary(terms)}


def combine(estimates, variances, n_syn=None, n_real=None) -> dict:
    """Combining rules for m >= 2 fully synthetic files (Raghunathan, Reiter and Rubin 2003,
    J. Official Statistics 19:1-16): q_bar, b_m (between-file variance), u_bar (mean within
    variance), T_f = (1 + 1/m) b_m - u_bar, nu_f = (m - 1)(1 - m u_bar / ((m + 1) b_m))^2 and
    a 95% interval q_bar -/+ t_{nu_f} sqrt(T_f).

    When T_f <= 0 the variance is replaced by Reiter's (2002, J. Official Statistics
    18:531-543) non-negative alternative T_f* = (n_syn / n_real) u_bar (n_syn / n_real = 1
    unless both sizes are given); nu_f is then undefined, so the interval uses the normal
    quantile and df is None (adjusted = True).
    """
    q = np.asarray(estimates, dtype=float)
    u = np.asarray(variances, dtype=float)
    m = len(q)
    if m < 2 or len(u) != m:
        raise ValueError("combine needs m >= 2 estimates and as many variances")
    q_bar, b_m, u_bar = q.mean(), q.var(ddof=1), u.mean()
    t_f = (1 + 1 / m) * b_m - u_bar
    adjusted = not t_f > 0
    if adjusted:
        t_f = (n_syn / n_real if n_syn and n_real else 1.0) * u_bar
        df, crit = None, Z95
    else:
        df = (m - 1) * (1 - m * u_bar / ((m + 1) * b_m)) ** 2
        crit = float(stats.t.ppf(0.975, df))
    half = crit * np.sqrt(t_f)
    return {"m": m, "estimate": _num(q_bar), "between_variance": _num(b_m),
            "within_variance": _num(u_bar), "variance": _num(t_f), "df": _num(df),
            "adjusted": adjusted, "lower": _num(q_bar - half), "upper": _num(q_bar + half)}


def regression_combined(real: pd.DataFrame, syns: list, formula: str, family: str = "ols",
                        standardize: bool = True) -> dict:
    """Fit the regression to each of m synthetic files, combine each coefficient with
    ``combine`` and compare the combined interval with the real one (as ``regression``).
    A term estimated in fewer than two synthetic files is listed with None and counted
    in missing_terms."""
    fr = _fit(real, formula, family, standardize)
    fits = [_fit(s, formula, family, standardize) for s in syns]
    names = list(fr["b"].index)
    names += [t for f in fits for t in f["b"].index if t not in names]
    n_syn = float(np.mean([f["n"] for f in fits]))
    terms = []
    for t in names:
        got = [(f["b"][t], f["se"][t] ** 2) for f in fits if t in f["b"].index]
        got = [g for g in got if _num(g[0]) is not None and _num(g[1]) is not None]
        comb = combine(*zip(*got), n_syn=n_syn, n_real=fr["n"]) if len(got) >= 2 else None
        s = None if comb is None else {"b": comb["estimate"], "lo": comb["lower"], "hi": comb["upper"]}
        row = _compare_term(t, _term(fr, t), s)
        row.update(m=len(got), df=None if comb is None else comb["df"],
                   adjusted=None if comb is None else comb["adjusted"])
        terms.append(row)
    return {"formula": formula, "family": family, "standardized": standardize, "m": len(syns),
            "n_real": fr["n"], "n_synthetic": [f["n"] for f in fits], "terms": terms, **_summary(terms)}


# ---------------------------------------------------------------- general utility

def _design(data: pd.DataFrame) -> pd.DataFrame:
    """Main-effects design: one-hot categoricals (missing a level of its own, first level
    dropped); numeric columns median-filled, plus a missing indicator where needed,
    and scaled; constant columns removed."""
    parts = []
    for c in data.columns:
        x = data[c]
        if pd.api.types.is_numeric_dtype(x) and x.dtype != bool:
            x = x.astype(float)
            miss = x.isna()
            x = x.fillna(x.median() if miss.mean() < 1 else 0.0)
            parts.append(x.rename(c))
            if miss.any():
                parts.append(miss.astype(float).rename(f"{c}__missing"))
        else:
            lev = x.astype(object).where(x.notna(), "__missing__").astype(str)
            parts.append(pd.get_dummies(lev, prefix=c, drop_first=True, dtype=float))
    X = pd.concat(parts, axis=1) if parts else pd.DataFrame(index=data.index)
    X = X.loc[:, X.std() > 0]
    return (X - X.mean()) / X.std()


def pmse(real: pd.DataFrame, syn: pd.DataFrame, columns=None, seed: int = 0,
         max_rows: int = PROPENSITY_MAX_ROWS) -> dict:
    """Propensity-score mean squared error (Woo et al. 2009; Snoke et al. 2018).

    The tables, each subsampled to at most ``max_rows`` rows as for ``propensity_auc`` (the
    same rows), are stacked with an indicator and an unpenalized main-effects logistic
    regression (seed: the solver's random_state) predicts it; pMSE = mean((p_i - c)^2) with
    c = n_syn / N. Its null expectation is E = (k - 1)(1 - c)^2 c / N, k the number of
    parameters (intercept included); ratio = pMSE / E (synthpop's S_pMSE; about 1 is good).
    The null already accounts for N, but a real difference between the files grows the
    ratio about in proportion to N, so the cap also makes ratios of small and large files
    comparable (and keeps the dense design of a 300,000-row census file, ~500 dummies, out
    of memory: 2.4 GB a copy).
    """
    columns = [c for c in real.columns if c in syn.columns] if columns is None else list(columns)
    real, syn = _subsample(real[columns], max_rows, [seed, 0]), _subsample(syn[columns], max_rows, [seed, 1])
    data = pd.concat([real, syn], ignore_index=True)
    y = np.r_[np.zeros(len(real)), np.ones(len(syn))]
    X = _design(data)
    n = len(y)
    c = len(syn) / n
    if X.shape[1]:
        model = LogisticRegression(C=np.inf, max_iter=2000, random_state=seed).fit(X.to_numpy(), y)
        p = model.predict_proba(X.to_numpy())[:, 1]
    else:
        p = np.full(n, c)
    k = X.shape[1] + 1
    value = float(np.mean((p - c) ** 2))
    expected = (k - 1) * (1 - c) ** 2 * c / n
    return {"pmse": _num(value), "expected": _num(expected),
            "ratio": _num(value / expected) if expected > 0 else None,
            "k": int(k), "c": _num(c), "n_real": int(len(real)), "n_synthetic": int(len(syn)),
            "max_rows": int(max_rows)}   # n_real, n_synthetic: the rows used


def _features(tables: list, features: list) -> list:
    """Feature matrices with every non-numeric column as a pandas Categorical over the
    union of levels (so codes agree across tables; HistGradientBoosting reads the dtype)."""
    out = [t[features].copy() for t in tables]
    for f in features:
        if pd.api.types.is_numeric_dtype(out[0][f]) and out[0][f].dtype != bool:
            for t in out:
                t[f] = t[f].astype(float)
            continue
        levels = sorted(set().union(*(set(t[f].dropna().astype(str)) for t in out)))
        for t in out:
            cat = pd.Categorical(t[f].astype("string"), categories=levels)
            t[f] = cat if len(levels) <= 255 else np.where(cat.codes < 0, np.nan, cat.codes)
    return out


def _subsample(df: pd.DataFrame, max_rows: int, seed) -> pd.DataFrame:
    """At most ``max_rows`` rows of ``df`` drawn without replacement (seeded), in table order."""
    if len(df) <= max_rows:
        return df
    keep = np.random.default_rng(seed).choice(len(df), max_rows, replace=False)
    return df.iloc[np.sort(keep)]


def propensity_auc(real: pd.DataFrame, syns: list, columns=None, seed: int = 0,
                   max_rows: int = PROPENSITY_MAX_ROWS) -> dict:
    """Gradient-boosting propensity score: how well a flexible classifier tells each
    synthetic file from the real rows (0.5 indistinguishable, 1 always told apart).

    Per file, the real rows and the synthetic rows (each side subsampled to at most
    ``max_rows`` rows without replacement, seeded, so the cost stays bounded at scale) are
    stacked with an indicator; a HistGradientBoostingClassifier (random_state=seed;
    non-numeric columns as pandas Categoricals, missing values as such) predicts it, and the
    score is the ROC AUC of the out-of-fold predictions of a stratified, shuffled
    ``PROPENSITY_FOLDS``-fold split (random_state=seed). Unlike the main-effects pMSE it
    sees interactions and broken dependence between columns. Returns the mean AUC over the
    files and, per file, its AUC and the rows it rests on; AUC is None for a file with fewer
    rows on a side than folds.
    """
    columns = [c for c in real.columns if all(c in s.columns for s in syns)] if columns is None else list(columns)
    real_used = _subsample(real[columns], max_rows, [seed, 0])
    files = []
    for i, syn in enumerate(syns):
        syn_used = _subsample(syn[columns], max_rows, [seed, i + 1])
        y = np.r_[np.zeros(len(real_used)), np.ones(len(syn_used))]
        auc = None
        if min(len(real_used), len(syn_used)) >= PROPENSITY_FOLDS:
            X = _features([pd.concat([real_used, syn_used], ignore_index=True)], columns)[0]
            p = np.empty(len(y))
            for train, test in StratifiedKFold(PROPENSITY_FOLDS, shuffle=True, random_state=seed).split(X, y):
                model = HistGradientBoostingClassifier(random_state=seed).fit(X.iloc[train], y[train])
                p[test] = model.predict_proba(X.iloc[test])[:, 1]
            auc = _num(roc_auc_score(y, p))
        files.append({"auc": auc, "n_synthetic": int(len(syn)), "n_synthetic_used": int(len(syn_used))})
    aucs = [f["auc"] for f in files if f["auc"] is not None]
    return {"auc": _num(np.mean(aucs)) if aucs else None, "files": files, "folds": PROPENSITY_FOLDS,
            "max_rows": int(max_rows), "n_real": int(len(real)), "n_real_used": int(len(real_used))}


def tstr(real_train: pd.DataFrame, real_test: pd.DataFrame, syn: pd.DataFrame, target: str,
         features: list, task: str = "regression", seed: int = 0) -> dict:
    """Train on synthetic, test on real: HistGradientBoosting (random_state=seed) trained on
    ``syn`` and on ``real_train``, both scored on ``real_test`` - R^2 (regression) or
    accuracy (classification) overall, plus mean absolute error by decile of the test
    target (regression; interior decile cut points only, no extreme value) or accuracy by
    class (classification). Rows missing the target are dropped."""
    if task not in ("regression", "classification"):
        raise ValueError(f"unknown task {task!r}")
    tabs = [t[t[target].notna()] for t in (syn, real_train, real_test)]
    Xs, Xr, Xt = _features(tabs, features)
    if task == "regression":
        ys, yr, yt = (t[target].astype(float).to_numpy() for t in tabs)
        make = lambda: HistGradientBoostingRegressor(random_state=seed)
    else:
        ys, yr, yt = (t[target].astype(str).to_numpy() for t in tabs)
        make = lambda: HistGradientBoostingClassifier(random_state=seed)
    ps = make().fit(Xs, ys).predict(Xt)
    pr = make().fit(Xr, yr).predict(Xt)
    out = {"task": task, "target": target, "n_synthetic": len(ys), "n_real_train": len(yr),
           "n_real_test": len(yt)}
    if task == "regression":
        s, r = r2_score(yt, ps), r2_score(yt, pr)
        dec, edges = pd.qcut(yt, 10, labels=False, retbins=True, duplicates="drop")
        groups = []
        for d in range(len(edges) - 1):
            i = dec == d
            groups.append({"decile": d + 1, "lower": _num(edges[d]) if d > 0 else None,
                           "upper": _num(edges[d + 1]) if d < len(edges) - 2 else None,
                           "n": int(i.sum()), "mae_synthetic": _num(np.mean(np.abs(yt[i] - ps[i]))),
                           "mae_real": _num(np.mean(np.abs(yt[i] - pr[i])))})
        out.update(metric="r2", by_decile=groups)
    else:
        s, r = accuracy_score(yt, ps), accuracy_score(yt, pr)
        out.update(metric="accuracy", by_class=[
            {"class": k, "n": int((yt == k).sum()),
             "accuracy_synthetic": _num(np.mean(ps[yt == k] == k)),
             "accuracy_real": _num(np.mean(pr[yt == k] == k))} for k in sorted(set(yt))])
    out.update(score_synthetic=_num(s), score_real=_num(r), difference=_num(s - r))
    return out
