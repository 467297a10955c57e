"""Level-3 and general utility measures against hand computations and simple cases."""
import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from threadpoolctl import threadpool_limits

from mixsynth.tableio import InputError
from mixsynth.report.analyses import group_statistic
from mixsynth.report.regressions import ci_overlap, combine, regression, regression_combined, std_sq_diff
from mixsynth.report.utility import pmse, propensity_auc, tstr


def _json(obj):
    return json.dumps(obj, allow_nan=False)


def _table(n, seed, shift=0.0, slope=1.5):
    rng = np.random.default_rng(seed)
    x1 = rng.normal(10 + shift, 3, n)
    x2 = rng.normal(0, 1, n)
    g = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    y = slope * x1 - x2 + np.select([g == "b", g == "c"], [1.0, -2.0], 0.0) + rng.normal(0, 1, n)
    z = rng.normal(0, 1, n)
    z[rng.random(n) < 0.1] = np.nan
    g_miss = pd.Series(g, dtype=object).where(rng.random(n) > 0.05)
    return pd.DataFrame({"x1": x1, "x2": x2, "g": g, "y": y, "z": z, "h": g_miss,
                         "d": (x2 > 0).astype(int)})


def test_ci_overlap_by_hand():
    assert ci_overlap(0.0, 2.0, 1.0, 4.0) == pytest.approx(0.5 * (1 / 2 + 1 / 3))
    assert ci_overlap(0.0, 1.0, 2.0, 3.0) == pytest.approx(-1.0)
    assert ci_overlap(0.0, 1.0, 0.0, 1.0) == pytest.approx(1.0)
    assert ci_overlap(1.0, 1.0, 0.0, 1.0) is None


def test_std_sq_diff_by_hand():
    assert std_sq_diff(1.0, 0.4, 0.2) == pytest.approx(9.0)


def test_regression_identical_and_reversed():
    real = _table(400, 1)
    same = regression(real, real.copy(), "y ~ x1 + x2 + d + C(g)")
    assert same["mean_cio"] == pytest.approx(1.0)
    assert same["mean_std_sq_diff"] == pytest.approx(0.0, abs=1e-12)
    assert same["sign_agreement"] == 1.0 and same["missing_terms"] == 0
    assert {t["term"] for t in same["terms"]} >= {"Intercept", "x1", "x2", "d"}
    x1 = next(t for t in same["terms"] if t["term"] == "x1")
    assert x1["real"] == pytest.approx(1.5 * real["x1"].std(), rel=0.05)  # standardized scale
    rev = regression(real, _table(400, 2, slope=-1.5), "y ~ x1 + x2 + d + C(g)")
    x1 = next(t for t in rev["terms"] if t["term"] == "x1")
    assert x1["cio"] < 0 and x1["sign_agree"] is False
    b = (x1["real_upper"] - x1["real"]) / stats.norm.ppf(0.975)  # approx se_real from the interval
    assert x1["std_sq_diff"] == pytest.approx(((x1["real"] - x1["synthetic"]) / b) ** 2, rel=0.01)
    _json(same), _json(rev)


def test_regression_missing_level_and_logit():
    real = _table(400, 3)
    syn = _table(400, 4)
    syn = syn[syn["g"] != "c"]
    res = regression(real, syn, "y ~ x1 + C(g)")
    assert res["missing_terms"] == 1
    miss = [t for t in res["terms"] if t["synthetic"] is None]
    assert len(miss) == 1 and miss[0]["cio"] is None and miss[0]["real"] is not None
    lg = regression(real, _table(400, 5), "d ~ x1 + y", family="logit")
    assert lg["mean_cio"] > 0 and lg["missing_terms"] == 0
    _json(res), _json(lg)


def _small():
    real = pd.DataFrame({"age": [10, 20, 30, 40, 50, 60, 70],
                         "sex": ["m", "m", "m", "f", "f", "f", "f"],
                         "emp": [1, 1, 0, 1, 0, 1, 0],
                         "w": [1.0, 2.0, 1.0, 1.0, 3.0, 2.0, 5.0]})
    syn = pd.DataFrame({"age": [20, 30, 40, 50], "sex": ["m", "m", "f", "f"],
                        "emp": [True, True, True, False], "w": [1.0, 1.0, 1.0, 1.0]})
    return real, syn


def test_group_rate_by_hand():
    real, syn = _small()
    res = group_statistic(real, syn, "rate", "emp", by="sex", where="age >= 15 and age <= 64", min_cell=1)
    f, m = res
    assert f["group"] == {"sex": "f"} and m["group"] == {"sex": "m"}
    assert f["real"] == pytest.approx(2 / 3) and f["n_real"] == 3 and f["n_synthetic"] == 2
    assert f["se_real"] == pytest.approx(np.sqrt(2 / 9 / 3))
    assert f["synthetic"] == pytest.approx(0.5) and f["difference"] == pytest.approx(0.5 - 2 / 3)
    assert m["real"] == pytest.approx(0.5) and m["se_real"] == pytest.approx(np.sqrt(0.25 / 2))
    assert m["within_error"] is True
    _json(res)


def test_group_rate_weighted_by_hand():
    real, syn = _small()
    f, m = group_statistic(real, syn, "rate", "emp", by=["sex"], where="age >= 15 and age <= 64",
                           weight="w", min_cell=1)
    assert f["real"] == pytest.approx(0.5)
    assert f["se_real"] == pytest.approx(np.sqrt(0.25 / (36 / 14)))
    assert m["real"] == pytest.approx(2 / 3)
    assert m["se_real"] == pytest.approx(np.sqrt(2 / 9 / (9 / 5)))
    assert m["difference"] == pytest.approx(1 / 3)
    assert m["within_error"] == (1 / 3 <= 1.96 * np.sqrt(2 / 9 / (9 / 5)))


def test_group_mean_median_overall():
    real, syn = _small()
    (mean,) = group_statistic(real, syn, "mean", "age", min_cell=1)
    assert mean["group"] == {} and mean["real"] == pytest.approx(40.0)
    assert mean["se_real"] == pytest.approx(real["age"].std() / np.sqrt(7))
    wmean = group_statistic(real, syn, "mean", "age", weight="w", min_cell=1)[0]
    assert wmean["real"] == pytest.approx(np.average(real["age"], weights=real["w"]))
    med = group_statistic(real, syn, "median", "age", by="sex", min_cell=1)
    assert [r["real"] for r in med] == [55.0, 20.0] and all(r["se_real"] is not None for r in med)
    q = group_statistic(real, syn, "quantile", "age", q=0.25, min_cell=1)
    assert q[0]["real"] == pytest.approx(np.quantile(real["age"], 0.25)) and q[0]["q"] == 0.25
    _json(med), _json(q)


def test_group_only_in_one_file():
    real, syn = _small()
    syn = syn.assign(sex=["m", "m", "x", "x"])
    res = group_statistic(real, syn, "mean", "age", by="sex", min_cell=1)
    f = next(r for r in res if r["group"] == {"sex": "f"})
    x = next(r for r in res if r["group"] == {"sex": "x"})
    assert f["synthetic"] is None and f["n_synthetic"] == 0 and f["within_error"] is None
    assert x["real"] is None and x["se_real"] is None and x["n_synthetic"] == 2
    _json(res)


def test_rate_of_a_text_column_counts_the_named_level():
    real = pd.DataFrame({"pt": ["yes", "no", "no", "no"], "g": [1, 1, 2, 2]})
    syn = pd.DataFrame({"pt": ["yes", "yes", "no", None], "g": [1, 1, 2, 2]})
    one, two = group_statistic(real, syn, "rate", "pt", by="g", level="yes", min_cell=1)
    assert (one["real"], one["synthetic"], two["real"], two["synthetic"]) == (0.5, 1.0, 0.0, 0.0)
    assert two["n_synthetic"] == 1                      # the missing value is dropped
    with pytest.raises(InputError, match="'pt'.*level: yes"):
        group_statistic(real, syn, "rate", "pt")


def test_group_with_few_real_rows_shows_no_real_estimate():
    real, syn = _small()   # 4 women and 3 men
    f, m = group_statistic(real, syn, "median", "age", by="sex", min_cell=4)
    assert f["real"] == 55.0 and f["se_real"] is not None and f["difference"] == 45.0 - 55.0
    assert m["real"] is None and m["se_real"] is None and m["difference"] is None
    assert m["within_error"] is None and m["synthetic"] == 25.0 and m["n_real"] == 3



def test_combine_by_hand_m3():
    est, var = [1.0, 1.2, 0.8], [0.01, 0.02, 0.015]
    res = combine(est, var)
    b, u = 0.04, 0.015
    t_f = (1 + 1 / 3) * b - u
    nu = 2 * (1 - 3 * u / (4 * b)) ** 2
    half = stats.t.ppf(0.975, nu) * np.sqrt(t_f)
    assert res["estimate"] == pytest.approx(1.0)
    assert res["between_variance"] == pytest.approx(b) and res["within_variance"] == pytest.approx(u)
    assert res["variance"] == pytest.approx(t_f) and res["df"] == pytest.approx(nu)
    assert res["lower"] == pytest.approx(1.0 - half) and res["upper"] == pytest.approx(1.0 + half)
    assert res["adjusted"] is False


def test_combine_nonnegative_fallback():
    res = combine([1.0, 1.01, 0.99], [0.04, 0.04, 0.04], n_syn=500, n_real=1000)
    assert res["adjusted"] is True and res["df"] is None
    assert res["variance"] == pytest.approx(0.5 * 0.04)
    assert res["upper"] - res["estimate"] == pytest.approx(stats.norm.ppf(0.975) * np.sqrt(0.02))
    _json(res)


def test_regression_combined():
    real = _table(500, 10)
    syns = [_table(500, 20 + i) for i in range(3)]
    res = regression_combined(real, syns, "y ~ x1 + x2 + C(g)")
    assert res["m"] == 3 and res["missing_terms"] == 0
    assert res["mean_cio"] > 0 and res["sign_agreement"] == 1.0
    assert all(t["m"] == 3 for t in res["terms"])
    _json(res)


def test_pmse_null_and_shifted():
    real = _table(1500, 30)
    cols = ["x1", "x2", "g", "z", "h"]
    null = pmse(real, _table(1500, 31), columns=cols)
    assert 0.5 < null["ratio"] < 2.0
    assert null["c"] == pytest.approx(0.5) and null["k"] == 10  # intercept, x1, x2, g (2), z, z missing, h (3)
    shifted = pmse(real, _table(1500, 32, shift=3.0), columns=cols)
    assert shifted["ratio"] > 20
    _json(null), _json(shifted)


def _permuted(table, column, seed):
    """``table`` with ``column`` shuffled: same marginals, its dependence on the others gone."""
    out = table.copy()
    out[column] = np.random.default_rng(seed).permutation(out[column].to_numpy())
    return out


def test_propensity_auc_null_and_broken_dependence():
    # here null 0.488, permuted 0.864; over 30 seed triples at 2,000 rows a side: null 0.485-0.524
    # (s.d. about 0.01), y permuted 0.854-0.879, while its main-effects pMSE ratio stayed at 0.66-3.97
    cols = ["x1", "x2", "g", "y", "z", "h"]
    real = _table(2000, 50)
    with threadpool_limits(limits=1, user_api="openmp"):  # small fits; threads only contend
        null = propensity_auc(real, [_table(2000, 51)], columns=cols)
        broken = propensity_auc(real, [_permuted(_table(2000, 52), "y", 53)], columns=cols)
    assert abs(null["auc"] - 0.5) < 0.06
    assert broken["auc"] > 0.7
    assert null["n_real_used"] == null["files"][0]["n_synthetic_used"] == 2000  # below max_rows: all rows
    _json(null), _json(broken)


def test_propensity_auc_subsampled_per_file_and_deterministic():
    cols = ["x1", "x2", "g", "y", "z", "h"]
    real, syns = _table(3000, 60), [_table(2500, 61), _permuted(_table(2500, 62), "y", 63)]
    with threadpool_limits(limits=1, user_api="openmp"):
        first = propensity_auc(real, syns, columns=cols, seed=7, max_rows=1000)
        again = propensity_auc(real, syns, columns=cols, seed=7, max_rows=1000)
        other = propensity_auc(real, syns, columns=cols, seed=8, max_rows=1000)
    assert first == again and first != other
    assert first["n_real"] == 3000 and first["n_real_used"] == 1000
    assert [(f["n_synthetic"], f["n_synthetic_used"]) for f in first["files"]] == [(2500, 1000)] * 2
    null, broken = (f["auc"] for f in first["files"])
    # here 0.516 and 0.835; over 20 seeds at 1,000 rows a side: null 0.474-0.519, permuted 0.824-0.866
    assert abs(null - 0.5) < 0.08 and broken > 0.7
    assert first["auc"] == pytest.approx((null + broken) / 2)
    assert propensity_auc(real, [syns[0].iloc[:4]], columns=cols)["auc"] is None  # fewer rows than folds


def test_tstr_regression_and_classification():
    with threadpool_limits(limits=1, user_api="openmp"):  # small fits; threads only contend
        real = _table(3000, 40)
        train, test = real.iloc[:2000], real.iloc[2000:]
        feats = ["x1", "x2", "g", "z"]
        good = tstr(train, test, _table(2000, 41), "y", feats)
        assert good["score_real"] > 0.9 and abs(good["difference"]) < 0.05
        assert len(good["by_decile"]) == 10 and good["by_decile"][0]["lower"] is None
        assert good["by_decile"][-1]["upper"] is None and sum(d["n"] for d in good["by_decile"]) == 1000
        perm = _table(2000, 42)
        perm["y"] = np.random.default_rng(0).permutation(perm["y"].to_numpy())
        bad = tstr(train, test, perm, "y", feats)
        assert bad["score_synthetic"] < good["score_synthetic"] - 0.5
        cls = tstr(train, test, _table(2000, 43), "g", ["x1", "x2", "y", "h"], task="classification")
        assert cls["metric"] == "accuracy" and {c["class"] for c in cls["by_class"]} == {"a", "b", "c"}
        assert abs(cls["difference"]) < 0.1
        _json(good), _json(bad), _json(cls)
