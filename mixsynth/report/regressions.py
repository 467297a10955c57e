"""The regressions users will run, fitted to the real and the synthetic file(s) and
compared coefficient by coefficient: interval overlap, standardized difference, sign, and
the combining rules over m synthetic files. JSON-ready aggregates, as analyses.py.
"""
import re

import numpy as np
import pandas as pd
import statsmodels.formula.api as smf
from scipy import stats

from .analyses import Z95, finite


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
    get = lambda d, k: None if d is None else finite(d[k])
    row = {"term": term, "real": get(r, "b"), "real_lower": get(r, "lo"), "real_upper": get(r, "hi"),
           "synthetic": get(s, "b"), "synthetic_lower": get(s, "lo"), "synthetic_upper": get(s, "hi")}
    ok = None not in row.values() and get(r, "se") is not None
    row.update(std_sq_diff=finite(std_sq_diff(r["b"], s["b"], r["se"])) if ok else None,
               cio=finite(ci_overlap(r["lo"], r["hi"], s["lo"], s["hi"])) if ok else None,
               sign_agree=bool(np.sign(r["b"]) == np.sign(s["b"])) if ok else None)
    return row


def _summary(terms: list) -> dict:
    """Averages over the coefficients compared in both files."""
    mean = lambda k: finite(np.mean(v)) if (v := [t[k] for t in terms if t[k] is not None]) else None
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
    return {"m": m, "estimate": finite(q_bar), "between_variance": finite(b_m),
            "within_variance": finite(u_bar), "variance": finite(t_f), "df": finite(df),
            "adjusted": adjusted, "lower": finite(q_bar - half), "upper": finite(q_bar + half)}


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
        got = [g for g in got if finite(g[0]) is not None and finite(g[1]) is not None]
        comb = combine(*zip(*got), n_syn=n_syn, n_real=fr["n"]) if len(got) >= 2 else None
        s = None if comb is None else {"b": comb["estimate"], "lo": comb["lower"], "hi": comb["upper"]}
        row = _compare_term(t, _term(fr, t), s)
        row.update(m=len(got), df=None if comb is None else comb["df"],
                   adjusted=None if comb is None else comb["adjusted"])
        terms.append(row)
    return {"formula": formula, "family": family, "standardized": standardize, "m": len(syns),
            "n_real": fr["n"], "n_synthetic": [f["n"] for f in fits], "terms": terms, **_summary(terms)}

