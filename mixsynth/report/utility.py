"""General utility of a synthetic table: how well a classifier tells it from the real rows
(pMSE, propensity AUC), and train on synthetic, test on real (TSTR). JSON-ready
aggregates, as analyses.py.
"""
import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, r2_score, roc_auc_score
from sklearn.model_selection import StratifiedKFold

from .analyses import finite

PROPENSITY_FOLDS = 5
PROPENSITY_MAX_ROWS = 50_000  # per side; larger tables are subsampled (seeded)


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
    comparable (and keeps the dense design of a large census file, with hundreds of dummies,
    within memory).
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
    return {"pmse": finite(value), "expected": finite(expected),
            "ratio": finite(value / expected) if expected > 0 else None,
            "k": int(k), "c": finite(c), "n_real": int(len(real)), "n_synthetic": int(len(syn)),
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
            auc = finite(roc_auc_score(y, p))
        files.append({"auc": auc, "n_synthetic": int(len(syn)), "n_synthetic_used": int(len(syn_used))})
    aucs = [f["auc"] for f in files if f["auc"] is not None]
    return {"auc": finite(np.mean(aucs)) if aucs else None, "files": files, "folds": PROPENSITY_FOLDS,
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
            groups.append({"decile": d + 1, "lower": finite(edges[d]) if d > 0 else None,
                           "upper": finite(edges[d + 1]) if d < len(edges) - 2 else None,
                           "n": int(i.sum()), "mae_synthetic": finite(np.mean(np.abs(yt[i] - ps[i]))),
                           "mae_real": finite(np.mean(np.abs(yt[i] - pr[i])))})
        out.update(metric="r2", by_decile=groups)
    else:
        s, r = accuracy_score(yt, ps), accuracy_score(yt, pr)
        out.update(metric="accuracy", by_class=[
            {"class": k, "n": int((yt == k).sum()),
             "accuracy_synthetic": finite(np.mean(ps[yt == k] == k)),
             "accuracy_real": finite(np.mean(pr[yt == k] == k))} for k in sorted(set(yt))])
    out.update(score_synthetic=finite(s), score_real=finite(r), difference=finite(s - r))
    return out
