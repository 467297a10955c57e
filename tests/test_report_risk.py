"""Disclosure-risk measures: known leaks are caught, independent draws pass, outputs stay aggregate."""
import json

import numpy as np
import pandas as pd
import pytest
from threadpoolctl import threadpool_limits

from mixsynth.report.risk import (attribute_inference, distance_to_closest_record, exact_copies,
                                  outlier_disclosure)
from mixsynth.schema import infer_spec
from tables import gaussian_copula_table


def _assert_aggregate(result, real: pd.DataFrame):
    """JSON without NaN, and no real row has all its values present in the text."""
    text = json.dumps(result, allow_nan=False)
    for row in real.itertuples(index=False):
        assert not all(str(v) in text for v in row)


def _inference_table(n: int, seed: int) -> pd.DataFrame:
    """Sensitive `diag` and `score` are deterministic functions of the quasi-identifiers."""
    rng = np.random.default_rng(seed)
    region = rng.choice(["north", "east", "south", "west"], size=n)
    age = rng.uniform(20, 80, size=n)
    diag = pd.Series(region).map({"north": "a", "east": "b", "south": "c", "west": "a"}).to_numpy()
    return pd.DataFrame({"region": region, "age": age, "diag": diag, "score": (age - 50) ** 2 / 10})


@pytest.fixture(autouse=True)
def one_openmp_thread():
    """Gradient boosting on a few hundred rows: one thread avoids OpenMP contention on a busy machine."""
    with threadpool_limits(1, user_api="openmp"):
        yield


INFERENCE_SPEC = {"columns": {"region": {"role": "quasi_identifier"}, "age": {"role": "quasi_identifier"},
                              "diag": {"role": "sensitive"}, "score": {"role": "sensitive"}}}


def test_exact_copies_hand_made_with_missing():
    real = pd.DataFrame({"a": [1.0, 2.0, np.nan, 4.0], "b": ["x", "y", "z", None]})
    syn = pd.DataFrame({"a": [1.0, np.nan, 2.0, 5.0], "b": ["x", "z", None, "x"]})
    out = exact_copies(real, syn, columns=["b"])
    assert out["all_columns"]["count"] == 2 and out["all_columns"]["share"] == 0.5
    assert out["quasi_identifiers"]["count"] == 4
    assert out["quasi_identifiers"]["count_matching_unique_real"] == 4
    json.dumps(out, allow_nan=False)


def test_exact_copies_zero_for_independent_continuous_draw():
    rng = np.random.default_rng(1)
    real = pd.DataFrame(rng.normal(size=(300, 3)), columns=["u", "v", "w"])
    syn = pd.DataFrame(rng.normal(size=(300, 3)), columns=["u", "v", "w"])
    out = exact_copies(real, syn)
    assert out["all_columns"]["count"] == 0 and out["quasi_identifiers"] is None
    _assert_aggregate(out, real)


@pytest.fixture(scope="module")
def dcr_tables():
    data = gaussian_copula_table(1500, seed=3)
    data.loc[data.index[::37], "income"] = np.nan
    train, holdout = data.iloc[:1000], data.iloc[1000:]
    return train, holdout, infer_spec(train)


def test_dcr_flags_noisy_copies(dcr_tables):
    train, holdout, spec = dcr_tables
    rng = np.random.default_rng(4)
    syn = train.sample(500, random_state=4).reset_index(drop=True)
    syn["income"] = syn["income"] * (1 + 1e-3 * rng.normal(size=len(syn)))
    out = distance_to_closest_record(train, holdout, syn, spec, seed=0)
    assert out["synthetic_closer_than_holdout"]
    assert out["share_synthetic_below_holdout_q05"] > 0.5
    _assert_aggregate(out, train)


def test_dcr_passes_independent_draw(dcr_tables):
    train, holdout, spec = dcr_tables
    syn = gaussian_copula_table(500, seed=5)
    out = distance_to_closest_record(train, holdout, syn, spec, seed=0, max_rows=400)
    assert out["n_train"] == 400 and out["n_synthetic"] == 400
    assert not out["synthetic_closer_than_holdout"]
    assert out["share_synthetic_below_holdout_q05"] < 0.15
    _assert_aggregate(out, train)


def test_attribute_inference_high_when_link_kept_low_when_broken():
    real, holdout = _inference_table(600, seed=6), _inference_table(400, seed=7)
    spec = infer_spec(real, INFERENCE_SPEC)
    kept = _inference_table(600, seed=8)
    out = attribute_inference(real, kept, spec, seed=0, holdout=holdout)
    assert [r["column"] for r in out] == ["diag", "score"]
    for r in out:
        assert r["level"] == "high" and r["lift"] > 0.3 and r["lift_holdout"] > 0.3 and r["meaning"]
    _assert_aggregate(out, real)

    broken = kept.assign(diag=np.random.default_rng(9).permutation(kept["diag"].to_numpy()),
                         score=np.random.default_rng(10).permutation(kept["score"].to_numpy()))
    out = attribute_inference(real, broken, spec, seed=0)
    for r in out:
        assert r["level"] == "low" and r["lift"] < 0.05 and r["lift_holdout"] is None
    _assert_aggregate(out, real)


def test_attribute_inference_empty_without_quasi_identifiers():
    real = _inference_table(100, seed=11)
    assert attribute_inference(real, real, infer_spec(real)) == []


def test_outlier_disclosure_identity_and_permuted():
    rng = np.random.default_rng(12)
    public = rng.normal(size=800)
    real = pd.DataFrame({"ndi": public, "reading": 0.4 * public + rng.normal(size=800)})
    same = outlier_disclosure(real, real.copy(), "ndi", "reading", k=50)
    assert same["k"] == 50 and same["measure"] == "r2"
    for end in ("low", "high", "both"):
        assert same[end]["r2"] == pytest.approx(1.0)
    permuted = real.assign(reading=rng.permutation(real["reading"].to_numpy())).sample(frac=1, random_state=0)
    permuted.loc[permuted.index[:5], "reading"] = np.nan
    out = outlier_disclosure(real, permuted, "ndi", "reading", k=50)
    for end in ("low", "high", "both"):
        assert out[end]["r2"] < 0.15
    assert 45 <= out["low"]["n_pairs"] <= 50 and out["both"]["n_pairs"] >= 90
    _assert_aggregate([same, out], real)


def test_outlier_disclosure_categorical_agreement():
    rng = np.random.default_rng(13)
    real = pd.DataFrame({"temp": rng.normal(size=300), "group": rng.choice(["p", "q"], size=300)})
    out = outlier_disclosure(real, real.copy(), "temp", "group", k=20)
    assert out["measure"] == "agreement" and out["low"]["agreement"] == 1.0
    json.dumps(out, allow_nan=False)
