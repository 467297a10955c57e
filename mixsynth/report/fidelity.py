"""Fidelity of a synthetic table to the real one: marginals (level 1) and associations (level 2).

Measures follow /work/shared/docs/evaluation.md. A column is treated as categorical when its kind
is categorical, binary or ordinal, or when the real column has at most 12 distinct non-missing
values; otherwise (count/continuous) it is numeric. For categorical measures missing is its own
category (label None); numeric measures drop missing values.

Every function returns JSON-ready aggregates (plain floats, ints, str, None for undefined; never
NaN) and never a row of either table.
"""
from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
from scipy import stats

from mixsynth.schema import LEVEL_KINDS, TableSpec

MAX_CATEGORICAL_DISTINCT = 12
DRIFT_LOOK = 0.5  # the article's rule of thumb for the correlation drift score
MIN_CELL = 10     # real cells with fewer rows than this are not shown (small-cell rule)


def marginals(real: pd.DataFrame, syn: pd.DataFrame, spec: TableSpec) -> list[dict]:
    """One dict per spec column, in spec order, all with the same keys.

    Keys: column, kind, treated_as ("categorical"/"numeric"), tvd (categorical), median_shift,
    iqr_shift, ks, wasserstein, wasserstein_scaled (numeric; None otherwise or when undefined),
    missing_diff_pp (synthetic minus real missing rate, percentage points), n_real, n_synthetic.
    Shifts are (syn - real)/real (None when the real value is 0); wasserstein_scaled divides by
    the real IQR, or by the real sample sd (ddof=1) when the IQR is 0.
    """
    cat = _categorical_columns(real, spec)
    out = []
    for col in spec.columns:
        r, s = real[col.name], syn[col.name]
        row = {"column": col.name, "kind": col.kind,
               "treated_as": "categorical" if col.name in cat else "numeric",
               "tvd": None, "median_shift": None, "iqr_shift": None, "ks": None,
               "wasserstein": None, "wasserstein_scaled": None,
               "missing_diff_pp": _f(100.0 * (_missing_rate(s) - _missing_rate(r))),
               "n_real": len(r), "n_synthetic": len(s)}
        if col.name in cat:
            cr, cs, labels = _codes(r, s)
            pr = np.bincount(cr, minlength=len(labels)) / max(len(cr), 1)
            ps = np.bincount(cs, minlength=len(labels)) / max(len(cs), 1)
            row["tvd"] = _f(0.5 * np.abs(pr - ps).sum())
        else:
            row.update(_numeric_marginal(_numeric(r), _numeric(s)))
        out.append(row)
    return out


def associations(real: pd.DataFrame, syn: pd.DataFrame, spec: TableSpec, drop_flag: float = 0.1) -> dict:
    """Pairwise associations, real vs synthetic, for every pair of spec columns.

    Returns {"categorical_pairs": [{a, b, v_real, v_synthetic, drop, flag}],
             "numeric_pairs": [{a, b, pearson_real, pearson_synthetic, pearson_change,
                                spearman_real, spearman_synthetic, spearman_change}],
             "mixed_pairs": [{categorical, numeric, eta_real, eta_synthetic, eta_change}],
             "drift": {score, threshold, warrants_look, n_encoded_columns},
             "summary": {drop_flag, n_flagged, max_v_drop, max_v_drop_pair,
                         max_abs_pearson_change, max_abs_pearson_change_pair}}.
    Cramer's V is bias-uncorrected, sqrt(chi2 / (n (min(r, c) - 1))), missing as a category;
    drop = v_real - v_synthetic and flag = drop > drop_flag. Correlations are pairwise complete.
    Eta is sqrt(between-group / total sum of squares) of the numeric column over the
    categorical's levels (missing numeric values dropped, missing categorical a group).
    The drift score is the Frobenius norm of corr_real - corr_syn, Pearson correlations of the
    numeric columns plus every categorical one-hot encoded (one column per level of either file,
    missing a level); undefined correlations count as 0, as in the article, whose rule of thumb
    is that a score above 0.5 warrants a look. Changes are synthetic minus real.
    """
    cat = _categorical_columns(real, spec)
    cats = [c.name for c in spec.columns if c.name in cat]
    nums = [c.name for c in spec.columns if c.name not in cat]
    codes = {c: _codes(real[c], syn[c]) for c in cats}
    values = {c: (_numeric(real[c]), _numeric(syn[c])) for c in nums}

    cat_pairs = []
    for a, b in combinations(cats, 2):
        (ar, as_, _), (br, bs, _) = codes[a], codes[b]
        vr, vs = _cramers_v(ar, br), _cramers_v(as_, bs)
        drop = _diff(vr, vs)
        cat_pairs.append({"a": a, "b": b, "v_real": vr, "v_synthetic": vs, "drop": drop,
                          "flag": drop is not None and drop > drop_flag})

    num_pairs = []
    for a, b in combinations(nums, 2):
        row = {"a": a, "b": b}
        for name, fn in (("pearson", _pearson), ("spearman", _spearman)):
            cr, cs = fn(values[a][0], values[b][0]), fn(values[a][1], values[b][1])
            row |= {f"{name}_real": cr, f"{name}_synthetic": cs, f"{name}_change": _diff(cs, cr)}
        num_pairs.append(row)

    mixed = []
    for c in cats:
        for x in nums:
            er, es = _eta(codes[c][0], values[x][0]), _eta(codes[c][1], values[x][1])
            mixed.append({"categorical": c, "numeric": x, "eta_real": er, "eta_synthetic": es,
                          "eta_change": _diff(es, er)})

    score, n_enc = _drift(codes, values)
    drops = [p for p in cat_pairs if p["drop"] is not None]
    changes = [p for p in num_pairs if p["pearson_change"] is not None]
    top_drop = max(drops, key=lambda p: p["drop"], default=None)
    top_change = max(changes, key=lambda p: abs(p["pearson_change"]), default=None)
    summary = {"drop_flag": float(drop_flag), "n_flagged": sum(p["flag"] for p in cat_pairs),
               "max_v_drop": None if top_drop is None else top_drop["drop"],
               "max_v_drop_pair": None if top_drop is None else [top_drop["a"], top_drop["b"]],
               "max_abs_pearson_change": None if top_change is None else abs(top_change["pearson_change"]),
               "max_abs_pearson_change_pair": None if top_change is None else [top_change["a"], top_change["b"]]}
    return {"categorical_pairs": cat_pairs, "numeric_pairs": num_pairs, "mixed_pairs": mixed,
            "drift": {"score": score, "threshold": DRIFT_LOOK,
                      "warrants_look": score is not None and score > DRIFT_LOOK,
                      "n_encoded_columns": n_enc},
            "summary": summary}


def crosstab(real: pd.DataFrame, syn: pd.DataFrame, a: str, b: str, min_cell: int = MIN_CELL) -> dict:
    """Cell shares of categorical columns a x b side by side (the paper's Table 3).

    Returns {a, b, rows: [R labels of a], columns: [C labels of b], real: R x C shares of the
    real rows, synthetic: R x C shares, difference: synthetic - real, n_real, n_synthetic,
    min_cell, suppressed}. Levels are the union over both files (missing is the label None,
    last); shares sum to 1. Real cells holding 1 to ``min_cell - 1`` rows are None in
    ``real`` and ``difference`` (small-cell rule); ``suppressed`` counts them.
    """
    ar, as_, rows = _codes(real[a], syn[a])
    br, bs, cols = _codes(real[b], syn[b])
    counts = [_table(x, y, len(rows), len(cols)) for x, y in ((ar, br), (as_, bs))]
    shares = [t / t.sum() if t.sum() else t for t in counts]
    small = (counts[0] > 0) & (counts[0] < min_cell)
    hide = lambda m: [[None if small[i, j] else float(v) for j, v in enumerate(row)] for i, row in enumerate(m)]
    return {"a": a, "b": b, "rows": rows, "columns": cols,
            "real": hide(shares[0]), "synthetic": _grid(shares[1]),
            "difference": hide(shares[1] - shares[0]),
            "n_real": len(real), "n_synthetic": len(syn),
            "min_cell": int(min_cell), "suppressed": int(small.sum())}


def distributions(real: pd.DataFrame, syn: pd.DataFrame, spec: TableSpec, bins: int = 20,
                  min_cell: int = MIN_CELL) -> list[dict]:
    """Binned shares of every spec column in both files, for overlaid distribution plots.

    Categorical columns: one bin per level (missing last, label None). Numeric columns:
    ``bins`` equal-width bins between the real 1% and 99% quantiles (edges rounded to 3
    significant digits, so no edge is a recorded value), plus an open bin at each end and a
    missing bin. Shares are of all rows of each file. A real bin holding 1 to
    ``min_cell - 1`` rows shows None (small-cell rule). Each entry: column, treated_as,
    labels (categorical) or edges (numeric, bins + 1 values), real, synthetic (shares per
    bin: [below, bins..., above, missing] for numeric), suppressed, min_cell.
    """
    cat = _categorical_columns(real, spec)
    out = []
    for col in spec.columns:
        r, s = real[col.name], syn[col.name]
        row = {"column": col.name, "treated_as": "categorical" if col.name in cat else "numeric"}
        if col.name in cat:
            cr, cs, labels = _codes(r, s)
            counts = [np.bincount(c, minlength=len(labels)).astype(float) for c in (cr, cs)]
            row["labels"] = labels
        else:
            xr, xs = _numeric(r), _numeric(s)
            present = xr[~np.isnan(xr)]
            lo, hi = np.quantile(present, [0.01, 0.99]) if len(present) else (0.0, 1.0)
            if hi <= lo:
                hi = lo + 1.0
            edges = np.unique([_round(e) for e in np.linspace(lo, hi, bins + 1)])
            counts = [np.concatenate([np.bincount(np.searchsorted(edges, x[~np.isnan(x)], side="right"),
                                                  minlength=len(edges) + 1), [np.isnan(x).sum()]]).astype(float)
                      for x in (xr, xs)]
            row["edges"] = [float(e) for e in edges]
        small = (counts[0] > 0) & (counts[0] < min_cell)
        row["real"] = [None if small[i] else float(v / max(len(r), 1)) for i, v in enumerate(counts[0])]
        row["synthetic"] = [float(v / max(len(s), 1)) for v in counts[1]]
        row.update(suppressed=int(small.sum()), min_cell=int(min_cell))
        out.append(row)
    return out


def _round(x: float) -> float:
    """x rounded to 3 significant digits."""
    return float(f"{x:.3g}")


def _categorical_columns(real: pd.DataFrame, spec: TableSpec) -> set[str]:
    """Names of spec columns treated as categorical (module docstring rule)."""
    return {c.name for c in spec.columns
            if c.kind in LEVEL_KINDS or real[c.name].nunique(dropna=True) <= MAX_CATEGORICAL_DISTINCT}


def _codes(r: pd.Series, s: pd.Series) -> tuple[np.ndarray, np.ndarray, list]:
    """Integer codes (n_r,), (n_s,) over the union of levels, and the K sorted labels (None = missing, last)."""
    codes, uniques = pd.factorize(pd.concat([r.astype(object), s.astype(object)], ignore_index=True))
    labels = [_plain(u) for u in uniques]
    try:
        order = sorted(range(len(labels)), key=lambda i: labels[i])
    except TypeError:
        order = sorted(range(len(labels)), key=lambda i: str(labels[i]))
    rank = np.empty(len(labels) + 1, dtype=np.int64)
    rank[order] = np.arange(len(labels))
    rank[-1] = len(labels)  # factorize marks missing as -1
    labels = [labels[i] for i in order]
    if (codes < 0).any():
        labels.append(None)
    codes = rank[codes]
    return codes[:len(r)], codes[len(r):], labels


def _numeric(s: pd.Series) -> np.ndarray:
    """Float values (n,), missing as NaN."""
    return pd.to_numeric(s).to_numpy(dtype=float, na_value=np.nan)


def _missing_rate(s: pd.Series) -> float:
    return float(s.isna().mean()) if len(s) else 0.0


def _numeric_marginal(r: np.ndarray, s: np.ndarray) -> dict:
    """Median/IQR shifts, KS, Wasserstein (raw and scaled) of two value arrays with NaN dropped."""
    r, s = r[~np.isnan(r)], s[~np.isnan(s)]
    if not len(r) or not len(s):
        return {}
    qr, qs = np.quantile(r, [0.25, 0.5, 0.75]), np.quantile(s, [0.25, 0.5, 0.75])
    iqr_r, iqr_s = qr[2] - qr[0], qs[2] - qs[0]
    w = stats.wasserstein_distance(r, s)
    scale = iqr_r if iqr_r > 0 else (np.std(r, ddof=1) if len(r) > 1 else 0.0)
    return {"median_shift": _rel(qs[1], qr[1]), "iqr_shift": _rel(iqr_s, iqr_r),
            "ks": _f(stats.ks_2samp(r, s).statistic), "wasserstein": _f(w),
            "wasserstein_scaled": _f(w / scale) if scale > 0 else None}


def _table(x: np.ndarray, y: np.ndarray, kx: int, ky: int) -> np.ndarray:
    """Contingency counts (kx, ky) of two code arrays."""
    return np.bincount(x * ky + y, minlength=kx * ky).reshape(kx, ky).astype(float)


def _cramers_v(x: np.ndarray, y: np.ndarray) -> float | None:
    """Bias-uncorrected Cramer's V of two code arrays; None when either has a single observed level."""
    t = _table(x, y, int(x.max(initial=0)) + 1, int(y.max(initial=0)) + 1)
    t = t[t.sum(axis=1) > 0][:, t.sum(axis=0) > 0]
    k = min(t.shape) - 1
    if k < 1:
        return None
    n = t.sum()
    expected = np.outer(t.sum(axis=1), t.sum(axis=0)) / n
    chi2 = ((t - expected) ** 2 / expected).sum()
    return _f(np.sqrt(chi2 / (n * k)))


def _pearson(x: np.ndarray, y: np.ndarray) -> float | None:
    """Pearson correlation over rows where both are present; None when undefined."""
    ok = ~(np.isnan(x) | np.isnan(y))
    return _corr(x[ok], y[ok])


def _spearman(x: np.ndarray, y: np.ndarray) -> float | None:
    """Spearman correlation (Pearson of average ranks) over rows where both are present."""
    ok = ~(np.isnan(x) | np.isnan(y))
    return _corr(stats.rankdata(x[ok]), stats.rankdata(y[ok]))


def _corr(x: np.ndarray, y: np.ndarray) -> float | None:
    if len(x) < 2:
        return None
    dx, dy = x - x.mean(), y - y.mean()
    den = np.sqrt((dx * dx).sum() * (dy * dy).sum())
    return _f(np.clip((dx * dy).sum() / den, -1.0, 1.0)) if den > 0 else None


def _eta(codes: np.ndarray, x: np.ndarray) -> float | None:
    """Correlation ratio of values x (n,) over groups codes (n,); None when x has no spread."""
    ok = ~np.isnan(x)
    g, v = codes[ok], x[ok]
    if not len(v):
        return None
    sst = ((v - v.mean()) ** 2).sum()
    if sst <= 0:
        return None
    counts = np.bincount(g)
    sums = np.bincount(g, weights=v)
    present = counts > 0
    ssb = (sums[present] ** 2 / counts[present]).sum() - v.sum() ** 2 / len(v)
    return _f(np.sqrt(np.clip(ssb / sst, 0.0, 1.0)))


def _drift(codes: dict, values: dict) -> tuple[float | None, int]:
    """Frobenius norm of corr_real - corr_syn on the encoded columns, and their number."""
    n_enc = sum(len(c[2]) for c in codes.values()) + len(values)
    if n_enc < 2:
        return None, n_enc
    cr, cs = (_encoded_corr([c[i] for c in codes.values()], [len(c[2]) for c in codes.values()],
                            [v[i] for v in values.values()]) for i in (0, 1))
    return _f(np.linalg.norm(cr - cs, "fro")), n_enc


def _encoded_corr(codes: list[np.ndarray], sizes: list[int], numbers: list[np.ndarray]) -> np.ndarray:
    """Pairwise-complete Pearson correlations (P, P) of the one-hot columns of ``codes``
    ((n,) level codes, ``sizes`` levels each, never missing) and the ``numbers`` ((n,) floats,
    NaN missing), in that order; undefined entries (a constant column, a pair seen together
    in under 2 rows) are 0. The same values as pandas ``DataFrame.corr`` of the one-hot frame,
    from sufficient statistics: one sparse Gram matrix and products with the numbers' masks,
    O(n (q^2 + P)) for q columns, never an (n, P) dense array (KDD census, 299,285 rows,
    ~500 encoded columns: 2.4 GB a file and minutes of pairwise loops the other way)."""
    from scipy import sparse

    n = len(codes[0]) if codes else len(numbers[0])
    offsets = np.cumsum([0] + sizes)
    X = np.column_stack(numbers) if numbers else np.zeros((n, 0))
    mask = ~np.isnan(X)
    seen = mask.sum(axis=0)
    dense = np.where(mask, X - np.where(seen > 0, np.nansum(X, axis=0) / np.maximum(seen, 1), 0.0), 0.0)
    scale = np.sqrt((dense ** 2).sum(axis=0) / np.maximum(seen, 1))
    dense /= np.where(scale > 0, scale, 1.0)       # centred and scaled: no cancellation below
    rows = np.repeat(np.arange(n), len(codes))
    cols = (np.column_stack(codes) + offsets[:-1]).ravel() if codes else np.zeros(0, np.int64)
    onehot = sparse.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, offsets[-1]))
    A = sparse.hstack([onehot, sparse.csr_matrix(dense)], format="csc")
    P, k = A.shape[1], offsets[-1]
    M = mask.astype(float)
    s1 = np.asarray(A.sum(axis=0)).ravel()
    A2 = A.multiply(A).tocsc()
    s2 = np.asarray(A2.sum(axis=0)).ravel()
    m = np.full((P, P), float(n))
    m[:, k:] = seen
    m[k:, :] = seen[:, None]
    m[k:, k:] = M.T @ M
    Su = np.repeat(s1[:, None], P, axis=1)           # sum of u over the rows where v is seen
    Suu = np.repeat(s2[:, None], P, axis=1)
    Su[:, k:] = A.T @ M
    Suu[:, k:] = A2.T @ M
    Suv = (A.T @ A).toarray()
    with np.errstate(divide="ignore", invalid="ignore"):
        cov = Suv - Su * Su.T / m
        var = Suu - Su ** 2 / m                    # of u over the rows where v is seen
        ok = var > 1e-12 * Suu.clip(1)
        ok &= (m >= 2) & ok.T
        corr = np.where(ok, cov / np.sqrt(np.abs(var * var.T)), 0.0)
    return np.clip(corr, -1.0, 1.0)


def _rel(new: float, old: float) -> float | None:
    return _f((new - old) / old) if old != 0 else None


def _diff(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else _f(a - b)


def _grid(m: np.ndarray) -> list[list[float]]:
    return [[float(v) for v in row] for row in m]


def _plain(v):
    """A level value as a JSON-ready Python scalar (numpy scalars unwrapped, others as str)."""
    if isinstance(v, np.generic):
        v = v.item()
    return v if isinstance(v, (bool, int, float, str)) else str(v)


def _f(x) -> float | None:
    """Plain float, or None when not finite."""
    x = float(x)
    return x if np.isfinite(x) else None
