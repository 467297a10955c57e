"""Disclosure-risk measures for a synthetic table against the real one.

Every function returns a JSON-ready dict (or list of dicts) of aggregates only:
counts, shares, distance quantiles and scores, never a row or a cell value.
Plain Python floats throughout; a number that cannot be computed is None, never NaN.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.neighbors import NearestNeighbors

from ..schema import LEVEL_KINDS, ColumnSpec, TableSpec

HIGH_LIFT = 0.10
MODERATE_LIFT = 0.05
_BOOTSTRAP = 200


def _float(x) -> float | None:
    """A plain float, or None when x is missing or not finite."""
    if x is None:
        return None
    x = float(x)
    return x if np.isfinite(x) else None


def _share(count: int, total: int) -> float | None:
    return count / total if total else None


def _row_ids(real: pd.DataFrame, syn: pd.DataFrame, columns: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Integer ids (n_real,), (n_syn,) equal exactly when two rows are equal on ``columns``
    (missing equals missing): each column factorized over both tables, the codes folded in
    one column at a time and re-factorized, so ids stay below the row count (no hashing, no
    collisions, no Python tuples: census-sized tables in seconds)."""
    ids = np.zeros(len(real) + len(syn), dtype=np.int64)
    for c in columns:
        codes, uniques = pd.factorize(pd.concat([real[c], syn[c]], ignore_index=True))
        ids = pd.factorize(ids * (len(uniques) + 1) + codes + 1)[0]
    return ids[:len(real)], ids[len(real):]


def _copies(real: pd.DataFrame, syn: pd.DataFrame, columns: list[str]) -> dict:
    if not columns:
        raise ValueError("exact_copies needs at least one column shared by the real and synthetic tables")
    real_ids, syn_ids = _row_ids(real, syn, columns)
    held = np.bincount(real_ids, minlength=len(real) + len(syn))[syn_ids]   # real rows like each synthetic one
    hits, unique_hits = int(np.count_nonzero(held)), int(np.count_nonzero(held == 1))
    return {"n_columns": len(columns), "count": int(hits), "share": _share(hits, len(syn)),
            "count_matching_unique_real": int(unique_hits),
            "share_matching_unique_real": _share(unique_hits, len(syn))}


def exact_copies(real: pd.DataFrame, syn: pd.DataFrame, columns: list[str] | None = None) -> dict:
    """Synthetic rows equal to some real row (missing equals missing), on all shared columns and on `columns`.

    On all columns the count should be 0: each copy reproduces a confidential record.
    On the quasi-identifiers (`columns`) matches are expected for common combinations;
    `count_matching_unique_real` counts synthetic rows whose combination belongs to exactly
    one real row, the ones that single that person out. Counts are exact (no sampling error).
    """
    shared = [c for c in real.columns if c in syn.columns]
    return {"n_real": len(real), "n_synthetic": len(syn),
            "all_columns": _copies(real, syn, shared),
            "quasi_identifiers": None if columns is None else _copies(real, syn, list(columns)),
            "meaning": "share = synthetic rows identical to a real row; 0 is required on all columns"}


def _codes(frame: pd.DataFrame, col: ColumnSpec) -> np.ndarray:
    """Level index per row (float; NaN when missing or not a spec level)."""
    lookup = {level: i for i, level in enumerate(col.levels)}
    return frame[col.name].astype(object).map(lookup).astype(float).to_numpy()


def _values(frame: pd.DataFrame, col: ColumnSpec) -> np.ndarray:
    """Level codes for level kinds, numeric values otherwise; NaN for missing."""
    if col.kind in LEVEL_KINDS:
        return _codes(frame, col)
    return pd.to_numeric(frame[col.name], errors="coerce").astype(float).to_numpy()


def _encode(frames: list[pd.DataFrame], spec: TableSpec) -> list[np.ndarray]:
    """Distance features for each frame, scaled by the first (training) frame.

    Numeric columns: (x - training median) / training IQR (sd if the IQR is 0);
    level columns: one-hot over the spec levels; a missing (or unseen) indicator per
    column when any frame has a missing cell there, with the value part set to 0.
    """
    blocks: list[list[np.ndarray]] = [[] for _ in frames]
    for col in spec.columns:
        raw = [_values(f, col) for f in frames]
        if col.kind in LEVEL_KINDS:
            parts = [(v[:, None] == np.arange(len(col.levels))).astype(float) for v in raw]
        else:
            train = raw[0][~np.isnan(raw[0])]
            q25, q50, q75 = np.percentile(train, [25, 50, 75])
            scale = q75 - q25 if q75 > q25 else (train.std() or 1.0)
            parts = [np.nan_to_num((v - q50) / scale)[:, None] for v in raw]
        if any(np.isnan(v).any() for v in raw):
            parts = [np.hstack([p, np.isnan(v)[:, None].astype(float)]) for p, v in zip(parts, raw)]
        for block, part in zip(blocks, parts):
            block.append(part)
    return [np.hstack(b) for b in blocks]


def _subsample(frame: pd.DataFrame, max_rows: int, rng: np.random.Generator) -> pd.DataFrame:
    if len(frame) <= max_rows:
        return frame
    return frame.iloc[np.sort(rng.choice(len(frame), max_rows, replace=False))]


def distance_to_closest_record(real_train: pd.DataFrame, real_holdout: pd.DataFrame, syn: pd.DataFrame,
                               spec: TableSpec, seed: int = 0, max_rows: int = 5000) -> dict:
    """Distance from each synthetic row, and from each held-out real row, to its nearest training row.

    The holdout distances are the reference: a synthesizer that does not memorise puts its
    rows no closer to the training data than fresh real rows are, so the synthetic quantiles
    should match the holdout ones and `share_synthetic_below_holdout_q05` should be near 0.05.
    `synthetic_closer_than_holdout` is True when the synthetic median is below the holdout
    median by more than sampling noise: the 95% bootstrap interval (over query rows, training
    rows fixed) of the median difference lies below 0. Each table is subsampled to `max_rows`.
    """
    rng = np.random.default_rng(seed)
    train, holdout, synth = (_subsample(f, max_rows, rng) for f in (real_train, real_holdout, syn))
    x_train, x_hold, x_syn = _encode([train, holdout, synth], spec)
    nn = NearestNeighbors(n_neighbors=1).fit(x_train)
    d_syn = nn.kneighbors(x_syn)[0][:, 0]
    d_hold = nn.kneighbors(x_hold)[0][:, 0]
    hold_q05 = np.quantile(d_hold, 0.05)
    boot_syn = np.median(d_syn[rng.integers(0, len(d_syn), (_BOOTSTRAP, len(d_syn)))], axis=1)
    boot_hold = np.median(d_hold[rng.integers(0, len(d_hold), (_BOOTSTRAP, len(d_hold)))], axis=1)
    lo, hi = np.quantile(boot_syn - boot_hold, [0.025, 0.975])
    diff = np.median(d_syn) - np.median(d_hold)
    return {
        "n_train": len(train), "n_holdout": len(holdout), "n_synthetic": len(synth),
        "synthetic": {"q05": _float(np.quantile(d_syn, 0.05)), "q50": _float(np.median(d_syn))},
        "holdout": {"q05": _float(hold_q05), "q50": _float(np.median(d_hold))},
        "share_synthetic_below_holdout_q05": _float(np.mean(d_syn < hold_q05)),
        "median_difference": _float(diff),
        "median_difference_ci95": [_float(lo), _float(hi)],
        "synthetic_closer_than_holdout": bool(hi < 0),
        "meaning": ("distances to the nearest training row; synthetic rows should be no closer than "
                    "held-out real rows (share below the holdout 5% quantile near 0.05)"),
    }


def _features(frame: pd.DataFrame, cols: list[ColumnSpec]) -> np.ndarray:
    return np.column_stack([_values(frame, c) for c in cols])


def _fit_predict(x: np.ndarray, y: np.ndarray, x_new: np.ndarray, classify: bool,
                 categorical: np.ndarray, seed: int) -> np.ndarray:
    """Predictions for x_new from a gradient-boosting model fitted on (x, y); a constant y predicts itself."""
    if np.unique(y).size < 2:
        return np.full(len(x_new), y[0])
    cls = HistGradientBoostingClassifier if classify else HistGradientBoostingRegressor
    return cls(categorical_features=categorical, random_state=seed).fit(x, y).predict(x_new)


def _score(pred: np.ndarray, y: np.ndarray, classify: bool) -> float | None:
    if classify:
        return _float(np.mean(pred == y))
    sst = np.sum((y - y.mean()) ** 2)
    return _float(1.0 - np.sum((y - pred) ** 2) / sst) if sst > 0 else None


def _lift_level(lift: float | None) -> str | None:
    if lift is None:
        return None
    return "high" if lift > HIGH_LIFT else "moderate" if lift > MODERATE_LIFT else "low"


def _attack(train: pd.DataFrame, x_real: np.ndarray, y_real: np.ndarray, quasi: list[ColumnSpec],
            target: ColumnSpec, classify: bool, seed: int) -> float | None:
    """Score on the real rows of a model trained on `train` (None if `train` has under 2 usable rows)."""
    y = _values(train, target)
    keep = ~np.isnan(y)
    if keep.sum() < 2:
        return None
    categorical = np.array([c.unordered for c in quasi])  # ordered ordinals keep their level order
    pred = _fit_predict(_features(train, quasi)[keep], y[keep], x_real, classify, categorical, seed)
    return _score(pred, y_real, classify)


def _diff(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def attribute_inference(real: pd.DataFrame, syn: pd.DataFrame, spec: TableSpec, seed: int = 0,
                        holdout: pd.DataFrame | None = None) -> list[dict]:
    """Attribute-inference risk per sensitive column, from the quasi-identifiers.

    A gradient-boosting model (classifier for level kinds, regressor for count/continuous)
    is trained on the synthetic table and scored on the real rows with the target present:
    accuracy, or R^2 against the real mean. lift = score - baseline (majority-class share
    of the real rows; 0 for R^2); level "high" above 0.10, "moderate" above 0.05, else "low".
    With `holdout` (real rows not in `real`), the same model trained on it gives
    `lift_holdout`, the attacker's best case with real data from the population;
    `excess_over_holdout` > 0 means the synthetic file teaches more than such data would.
    Uncertainty: an accuracy on n rows has standard error about sqrt(p(1-p)/n) <= 0.5/sqrt(n).
    Returns [] when the spec has no sensitive or no quasi-identifier column.
    """
    quasi = spec.by_role("quasi_identifier")
    if not quasi:
        return []
    x_all = _features(real, quasi)
    results = []
    for target in spec.by_role("sensitive"):
        classify = target.kind in LEVEL_KINDS
        y_all = _values(real, target)
        keep = ~np.isnan(y_all)
        x_real, y_real = x_all[keep], y_all[keep]
        if not len(y_real):
            baseline = score = score_hold = None
        else:
            baseline = _float(np.unique(y_real, return_counts=True)[1].max() / len(y_real)) if classify else 0.0
            score = _attack(syn, x_real, y_real, quasi, target, classify, seed)
            score_hold = None if holdout is None else _attack(holdout, x_real, y_real, quasi, target, classify, seed)
        lift, lift_hold = _diff(score, baseline), _diff(score_hold, baseline)
        metric = "accuracy" if classify else "r2"
        meaning = (f"a model trained on the synthetic file predicts this column for real rows from "
                   f"{len(quasi)} quasi-identifier(s)")
        if lift is not None:
            reference = "always guessing the most common class" if classify else "predicting the mean"
            meaning += f" with {metric} {score:.3f}, {lift:+.3f} over {reference}"
        if lift_hold is not None:
            meaning += f"; trained on held-out real rows the lift is {lift_hold:+.3f}"
        results.append({
            "column": target.name, "kind": target.kind, "metric": metric, "n_scored": int(keep.sum()),
            "n_quasi_identifiers": len(quasi), "score_synthetic": score, "baseline": baseline,
            "lift": lift, "score_holdout": score_hold, "lift_holdout": lift_hold,
            "excess_over_holdout": _diff(score, score_hold), "level": _lift_level(lift),
            "meaning": meaning,
        })
    return results


def _pair_measure(y_real: pd.Series, x_syn: pd.Series, numeric: bool) -> dict:
    """R^2 of OLS real ~ synthetic (numeric) or agreement share (levels) over complete pairs."""
    y, x = y_real.to_numpy(), x_syn.to_numpy()  # paired by position, not by index
    ok = ~(pd.isna(y) | pd.isna(x))
    y, x = y[ok], x[ok]
    n = len(y)
    if not numeric:
        real_shares = pd.Series(y).value_counts(normalize=True)
        syn_shares = pd.Series(x).value_counts(normalize=True)
        chance = float((real_shares * syn_shares.reindex(real_shares.index, fill_value=0.0)).sum()) if n else None
        return {"n_pairs": n, "agreement": _share(int(np.sum(y == x)), n), "chance_agreement": chance}
    y, x = y.astype(float), x.astype(float)
    r2 = float(np.corrcoef(x, y)[0, 1] ** 2) if n >= 3 and x.std() > 0 and y.std() > 0 else None
    null_q95 = _float(stats.beta.ppf(0.95, 0.5, (n - 2) / 2)) if n >= 3 else None
    return {"n_pairs": n, "r2": r2, "null_r2_q95": null_q95}


def outlier_disclosure(real: pd.DataFrame, syn: pd.DataFrame, public: str, sensitive: str, k: int = 50) -> dict:
    """The paper's outlier attribute-disclosure check (Section 6.4).

    Rows holding the k smallest and k largest values of `public` are taken in each table
    (rows missing `public` skipped; k capped at half the smaller table); the i-th real order
    statistic is paired with the i-th synthetic one, and the real `sensitive` values are
    regressed (OLS) on the synthetic ones: R^2 near 0 is protective (the paper saw 0.107
    and 0.0036, one CART file 0.5). Uncertainty: with no association R^2 ~ Beta(1/2, (n-2)/2),
    whose 95% quantile `null_r2_q95` is about 3.8/n. "both" pools the two ends, so a real
    public-sensitive correlation raises it without any leak. A non-numeric sensitive column
    gives the share of pairs that agree, next to the agreement expected by chance.
    """
    r = real.loc[real[public].notna(), [public, sensitive]].sort_values(public, kind="mergesort")
    s = syn.loc[syn[public].notna(), [public, sensitive]].sort_values(public, kind="mergesort")
    k = min(k, len(r) // 2, len(s) // 2)
    numeric = all(pd.api.types.is_numeric_dtype(f[sensitive]) and not pd.api.types.is_bool_dtype(f[sensitive])
                  for f in (real, syn))
    low = (r[sensitive].iloc[:k], s[sensitive].iloc[:k])
    high = (r[sensitive].iloc[len(r) - k:], s[sensitive].iloc[len(s) - k:])
    both = (pd.concat([low[0], high[0]]), pd.concat([low[1], high[1]]))
    return {
        "public": public, "sensitive": sensitive, "k": k, "measure": "r2" if numeric else "agreement",
        "low": _pair_measure(*low, numeric), "high": _pair_measure(*high, numeric),
        "both": _pair_measure(*both, numeric),
        "meaning": ("how well the sensitive values of synthetic outliers on the public column predict "
                    "the real outliers' values; near 0 is protective"),
    }
