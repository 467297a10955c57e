"""Fidelity measures (levels 1 and 2) against hand-computed values and the guide's running example."""
import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mixsynth.report.fidelity import associations, crosstab, distributions, marginals
from mixsynth.schema import ColumnSpec, TableSpec, infer_spec


def _spec(**kinds):
    return TableSpec(columns=tuple(ColumnSpec(name=n, kind=k) for n, k in kinds.items()))


def _json(obj):
    return json.loads(json.dumps(obj, allow_nan=False))


def _row(rows, name):
    return next(r for r in rows if r["column"] == name)


def test_tvd_with_missing_as_category_and_missing_rate():
    real = pd.DataFrame({"c": ["x", "x", "y", None]})
    syn = pd.DataFrame({"c": ["x", "y", "y", "y"]})
    (row,) = _json(marginals(real, syn, _spec(c="categorical")))
    # real: x .5, y .25, missing .25; syn: x .25, y .75 -> 0.5 * (.25 + .5 + .25)
    assert row["tvd"] == pytest.approx(0.5)
    assert row["missing_diff_pp"] == pytest.approx(-25.0)
    assert (row["treated_as"], row["n_real"], row["n_synthetic"]) == ("categorical", 4, 4)
    assert row["ks"] is None and row["median_shift"] is None


def test_numeric_marginal_by_hand_and_against_scipy():
    r = np.arange(1.0, 21.0)
    s = r + 2.0
    real = pd.DataFrame({"x": np.append(r, [np.nan] * 5)})
    syn = pd.DataFrame({"x": np.append(s, [np.nan] * 5)})
    (row,) = _json(marginals(real, syn, _spec(x="continuous")))
    assert row["treated_as"] == "numeric" and row["tvd"] is None
    assert row["median_shift"] == pytest.approx(2.0 / 10.5)
    assert row["iqr_shift"] == pytest.approx(0.0)
    assert row["ks"] == pytest.approx(stats.ks_2samp(r, s).statistic)
    assert row["wasserstein"] == pytest.approx(stats.wasserstein_distance(r, s)) == pytest.approx(2.0)
    assert row["wasserstein_scaled"] == pytest.approx(2.0 / 9.5)  # IQR of 1..20 (linear) is 9.5
    assert row["missing_diff_pp"] == 0.0


def test_numeric_marginal_zero_median_and_zero_iqr():
    r = np.append(np.zeros(40), np.arange(100.0, 113.0))  # median 0, IQR 0, 14 distinct values
    s = r + 1.0
    (row,) = _json(marginals(pd.DataFrame({"x": r}), pd.DataFrame({"x": s}), _spec(x="continuous")))
    assert row["median_shift"] is None and row["iqr_shift"] is None
    assert row["wasserstein_scaled"] == pytest.approx(1.0 / np.std(r, ddof=1))


def test_count_with_few_distinct_values_is_categorical():
    real = pd.DataFrame({"rooms": np.tile(np.arange(1, 9), 5)})
    (row,) = _json(marginals(real, real.copy(), _spec(rooms="count")))
    assert row["treated_as"] == "categorical" and row["tvd"] == 0.0


def test_cramers_v_2x2_by_hand_and_flag():
    def table(cells):
        rows = [(a, b) for (a, b), k in cells.items() for _ in range(k)]
        return pd.DataFrame(rows, columns=["a", "b"])

    real = table({("p", "u"): 30, ("p", "v"): 10, ("q", "u"): 10, ("q", "v"): 30})
    syn = table({("p", "u"): 20, ("p", "v"): 20, ("q", "u"): 20, ("q", "v"): 20})
    out = _json(associations(real, syn, _spec(a="binary", b="binary")))
    (pair,) = out["categorical_pairs"]
    assert pair["v_real"] == pytest.approx(0.5)  # phi = (900 - 100) / sqrt(40^4)
    assert pair["v_synthetic"] == pytest.approx(0.0)
    assert pair["drop"] == pytest.approx(0.5) and pair["flag"] is True
    assert out["summary"]["n_flagged"] == 1 and out["summary"]["max_v_drop_pair"] == ["a", "b"]
    assert out["numeric_pairs"] == [] and out["summary"]["max_abs_pearson_change"] is None


def test_eta_by_hand():
    x = np.append(np.arange(1.0, 15.0), [np.nan] * 4)  # missing values are dropped
    real = pd.DataFrame({"g": ["a"] * 7 + ["b"] * 7 + ["c"] * 4, "x": x})
    syn = pd.DataFrame({"g": ["a", "b"] * 7 + ["c"] * 4, "x": x})
    out = _json(associations(real, syn, _spec(g="categorical", x="continuous")))
    (pair,) = out["mixed_pairs"]
    # SST of 1..14 is 227.5; real group means 4 and 11: SSB 171.5; synthetic means 7 and 8: SSB 3.5
    assert pair["eta_real"] == pytest.approx(np.sqrt(171.5 / 227.5))
    assert pair["eta_synthetic"] == pytest.approx(np.sqrt(3.5 / 227.5))
    assert pair["eta_change"] == pytest.approx(pair["eta_synthetic"] - pair["eta_real"])


def test_correlations_pairwise_complete_against_scipy():
    rng = np.random.default_rng(1)
    r = rng.normal(size=(60, 2))
    r[:, 1] += r[:, 0]
    s = rng.normal(size=(60, 2))
    r[3, 0] = r[7, 1] = s[5, 1] = np.nan
    real, syn = pd.DataFrame(r, columns=["u", "v"]), pd.DataFrame(s, columns=["u", "v"])
    out = _json(associations(real, syn, _spec(u="continuous", v="continuous")))
    (pair,) = out["numeric_pairs"]
    for name, fn in (("pearson", stats.pearsonr), ("spearman", stats.spearmanr)):
        for key, m in (("real", r), ("synthetic", s)):
            ok = ~np.isnan(m).any(axis=1)
            assert pair[f"{name}_{key}"] == pytest.approx(fn(m[ok, 0], m[ok, 1])[0])
    assert out["summary"]["max_abs_pearson_change"] == pytest.approx(abs(pair["pearson_change"]))
    assert out["summary"]["max_abs_pearson_change_pair"] == ["u", "v"]


def test_drift_score_against_numpy():
    rng = np.random.default_rng(2)
    r, s = rng.normal(size=(50, 3)), rng.normal(size=(50, 3))
    r[:, 2] += 2 * r[:, 0]
    spec = _spec(x0="continuous", x1="continuous", x2="continuous")
    out = associations(pd.DataFrame(r, columns=spec.names), pd.DataFrame(s, columns=spec.names), spec)
    expected = np.linalg.norm(np.corrcoef(r.T) - np.corrcoef(s.T), "fro")
    assert out["drift"]["score"] == pytest.approx(expected)
    assert out["drift"]["n_encoded_columns"] == 3
    assert out["drift"]["warrants_look"] is bool(expected > 0.5)


def test_drift_score_one_hot_encodes_categoricals():
    rng = np.random.default_rng(3)
    real = pd.DataFrame({"g": rng.choice(["a", "b", "c"], 80), "x": rng.normal(size=80)})
    real["x"] += (real["g"] == "a") * 2.0
    syn = pd.DataFrame({"g": rng.choice(["a", "b", "c"], 80), "x": rng.normal(size=80)})
    out = associations(real, syn, _spec(g="categorical", x="continuous"))

    def encoded(df):
        return np.column_stack([(df["g"] == lv).to_numpy(float) for lv in "abc"] + [df["x"].to_numpy()])

    expected = np.linalg.norm(np.corrcoef(encoded(real).T) - np.corrcoef(encoded(syn).T), "fro")
    assert out["drift"]["score"] == pytest.approx(expected)
    assert out["drift"]["n_encoded_columns"] == 4


def test_drift_score_with_blanks_and_constant_columns_is_pandas_pairwise_complete_correlation():
    """The sufficient-statistics correlation equals pandas' pairwise-complete one on a
    one-hot frame: blanks in a numeric column (dropped pairwise), a blank as a level, a
    level only the synthetic file has (constant 0 in the real one), a constant column."""
    rng = np.random.default_rng(4)
    n = 400

    def table(shift, levels):
        t = pd.DataFrame({"g": rng.choice(levels, n), "h": rng.choice(["u", None], n),
                          "x": rng.normal(size=n) * 1e4 + 5e5, "y": rng.exponential(size=n), "k": 2.0})
        t["x"] += shift * (t["g"] == "a") * 1e4
        t.loc[rng.random(n) < 0.3, "x"] = np.nan
        t.loc[rng.random(n) < 0.5, "y"] = np.nan
        return t

    real, syn = table(2.0, ["a", "b"]), table(0.0, ["a", "b", "c"])
    spec = _spec(g="categorical", h="categorical", x="continuous", y="continuous", k="continuous")
    out = associations(real, syn, spec)

    def encoded(df):
        cols = {f"g{lv}": (df["g"] == lv).astype(float) for lv in "abc"}
        cols |= {"hu": (df["h"] == "u").astype(float), "hnone": df["h"].isna().astype(float)}
        return pd.DataFrame(cols | {c: df[c] for c in "xyk"}).corr().fillna(0.0).to_numpy()

    assert out["drift"]["n_encoded_columns"] == 8
    assert out["drift"]["score"] == pytest.approx(np.linalg.norm(encoded(real) - encoded(syn), "fro"), rel=1e-9)
    assert out["drift"]["score"] > 0.5                   # the shifted x by g shows


def test_crosstab_cell_shares_by_hand():
    real = pd.DataFrame({"a": ["p", "p", "q", None], "b": [1, 2, 1, 1]})
    syn = pd.DataFrame({"a": ["q", "q", "q", "q"], "b": [2, 2, 3, 3]})
    out = _json(crosstab(real, syn, "a", "b", min_cell=1))
    assert out["rows"] == ["p", "q", None] and out["columns"] == [1, 2, 3]
    assert out["real"] == [[0.25, 0.25, 0.0], [0.25, 0.0, 0.0], [0.25, 0.0, 0.0]]
    assert out["synthetic"] == [[0.0, 0.0, 0.0], [0.0, 0.5, 0.5], [0.0, 0.0, 0.0]]
    assert out["difference"][1] == [-0.25, 0.5, 0.5]
    assert (out["n_real"], out["n_synthetic"]) == (4, 4)


def test_crosstab_hides_real_cells_under_the_small_cell_threshold():
    real = pd.DataFrame({"a": ["p"] * 12 + ["q"] * 3, "b": [1] * 15})
    syn = pd.DataFrame({"a": ["q"] * 15, "b": [1] * 15})
    out = _json(crosstab(real, syn, "a", "b", min_cell=10))
    assert out["real"] == [[0.8], [None]] and out["difference"] == [[-0.8], [None]]
    assert out["synthetic"] == [[0.0], [1.0]] and out["suppressed"] == 1


def test_distributions_by_hand_with_small_bins_hidden():
    real = pd.DataFrame({"c": ["x"] * 30 + ["y"] * 2, "v": np.r_[np.linspace(0, 1, 31), np.nan]})
    syn = pd.DataFrame({"c": ["y"] * 32, "v": np.r_[np.full(16, -5.0), np.full(16, 5.0)]})
    out = {d["column"]: d for d in _json(distributions(real, syn, _spec(c="categorical", v="continuous"),
                                                        bins=2, min_cell=3))}
    c, v = out["c"], out["v"]
    assert c["labels"] == ["x", "y"] and c["real"] == [30 / 32, None] and c["synthetic"] == [0.0, 1.0]
    lo, hi = np.quantile(np.linspace(0, 1, 31), [0.01, 0.99])
    assert v["edges"] == [float(f"{e:.3g}") for e in (lo, (lo + hi) / 2, hi)]
    # bins: below 0.01, [0.01, 0.5), [0.5, 0.99), at or above 0.99, missing
    assert v["real"] == [None, 14 / 32, 15 / 32, None, None] and v["suppressed"] == 3
    assert v["synthetic"] == [0.5, 0.0, 0.0, 0.5, 0.0]


def _labour_force(n=4000, seed=0):
    """Guide's running example: employment depends on sex (V about 0.2), plus age and income."""
    rng = np.random.default_rng(seed)
    sex = rng.integers(1, 3, n)
    p_emp = np.where(sex == 1, 0.60, 0.40)
    u = rng.random(n)
    lfs = np.where(u < p_emp, "employed", np.where(u < p_emp + 0.05, "unemployed", "inactive"))
    age = rng.uniform(15, 64, n).round(1)
    income = np.exp(9 + 0.02 * age + 0.3 * (lfs == "employed") + rng.normal(0, 0.5, n))
    income[rng.random(n) < 0.05] = np.nan
    region = rng.integers(1, 6, n)
    return pd.DataFrame({"region": region, "sex": sex, "lfs": lfs, "age": age, "income": income})


def test_crude_synthesis_keeps_marginals_but_is_flagged():
    real = _labour_force()
    spec = infer_spec(real)
    rng = np.random.default_rng(9)
    crude = pd.DataFrame({c: rng.permutation(real[c].to_numpy()) for c in real.columns})
    margins = _json(marginals(real, crude, spec))
    assert all(r["tvd"] < 0.02 for r in margins if r["treated_as"] == "categorical")
    assert all(r["ks"] < 0.02 for r in margins if r["treated_as"] == "numeric")
    out = _json(associations(real, crude, spec))
    pair = next(p for p in out["categorical_pairs"] if {p["a"], p["b"]} == {"sex", "lfs"})
    assert pair["v_real"] >= 0.13 and pair["flag"] is True
    assert out["summary"]["max_v_drop_pair"] == ["sex", "lfs"]
    assert out["summary"]["n_flagged"] >= 1 and out["drift"]["warrants_look"] is True
    assert crosstab(real, crude, "sex", "lfs")["rows"] == [1, 2]


def test_row_bootstrap_is_not_flagged():
    real = _labour_force()
    spec = infer_spec(real)
    boot = real.sample(frac=1.0, replace=True, random_state=4).reset_index(drop=True)
    margins = _json(marginals(real, boot, spec))
    assert all(r["tvd"] < 0.05 for r in margins if r["treated_as"] == "categorical")
    out = _json(associations(real, boot, spec))
    assert out["summary"]["n_flagged"] == 0
    assert not any(p["flag"] for p in out["categorical_pairs"])
    assert out["drift"]["score"] < 0.5 and out["drift"]["warrants_look"] is False


def test_degenerate_columns_give_none_not_nan():
    real = pd.DataFrame({"c": ["a", "b"] * 10, "k": ["z"] * 20, "x": np.arange(20.0), "y": np.arange(20.0) ** 2})
    syn = pd.DataFrame({"c": ["a"] * 20, "k": ["z"] * 20, "x": [np.nan] * 20, "y": [3.0] * 20})
    spec = _spec(c="categorical", k="categorical", x="continuous", y="continuous")
    margins = _json(marginals(real, syn, spec))
    assert _row(margins, "x")["ks"] is None and _row(margins, "x")["missing_diff_pp"] == 100.0
    out = _json(associations(real, syn, spec))
    assert all(p["v_synthetic"] is None and p["flag"] is False for p in out["categorical_pairs"])
    (num,) = out["numeric_pairs"]
    assert num["pearson_real"] == pytest.approx(stats.pearsonr(real["x"], real["y"])[0])
    assert num["pearson_synthetic"] is None and num["pearson_change"] is None
    assert out["drift"]["score"] is not None
