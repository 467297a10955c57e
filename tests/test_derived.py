"""Columns that are a function of another are found, left out of the copula and looked up
from their source, so the link holds in every synthetic row (mixsynth/derived.py)."""
import numpy as np
import pandas as pd
import pytest

from mixsynth.config import RunConfig
from mixsynth.derived import find_derivations
from mixsynth.model import CopulaSynthesizer
from mixsynth.schema import infer_spec, to_codes
from mixsynth.tableio import InputError

EDU_BINS = [-1, 8, 11, 12, 15, 17]   # years of schooling -> five classes


def survey(n: int = 1500, seed: int = 3) -> pd.DataFrame:
    """Years of schooling with its five classes and a high-school flag, a state code with its
    tax rate (continuous, one per state), districts (text) in three regions, the year of
    death beside death, an income that rises with schooling, and a smoking flag that is not
    a function of anything."""
    rng = np.random.default_rng(seed)
    years = np.clip(np.round(rng.normal(11.5, 3, n)), 0, 17)
    state = rng.integers(1, 31, n)
    tax = np.round(rng.uniform(0.2, 1.5, 31), 3)[state]
    district = rng.integers(0, 9, n)
    death = rng.random(n) < 0.2
    return pd.DataFrame({
        "years": years,
        "edu": pd.cut(years, EDU_BINS, labels=["none", "some", "hs", "college", "grad"]).astype(str),
        "hs": (years >= 12).astype(int),
        "state": state,
        "tax": tax,
        "district": np.array([f"d{i}" for i in range(9)])[district],
        "region": np.array(["north", "south", "east"])[district % 3],
        "income": np.exp(9 + 0.08 * years + rng.normal(0, 0.4, n)),
        "yrdth": np.where(death, rng.integers(83, 93, n), np.nan),
        "death": death.astype(int),
        "smoker": (rng.random(n) < 0.3 + 0.02 * (years - 11)).astype(int),
    })


def test_recodes_and_values_per_area_are_found_and_nothing_else():
    """The five classes stay modelled (from years they would lose their level columns);
    the flag comes from the classes, the nearest coarsening."""
    table = survey()
    spec = infer_spec(table)
    found = {d.name: d.source for d in find_derivations(spec, to_codes(table, spec))}
    assert found == {"hs": "edu", "tax": "state", "region": "district", "death": "yrdth"}


def test_a_link_with_one_slip_or_seen_only_in_groups_of_one_row_is_not_derived():
    """One row off the rule breaks the function; a key every row holds alone (an id) makes
    every column a function of it, but a table without any link would show that too."""
    table = survey(n=400)
    table.loc[table.index[table["years"] == 12][0], "hs"] = 0
    table["id"] = np.arange(len(table))
    spec = infer_spec(table)
    found = {d.name: d.source for d in find_derivations(spec, to_codes(table, spec))}
    assert "hs" not in found
    assert "id" not in found.values()


def test_derived_columns_hold_exactly_in_every_synthetic_row(short_run, tmp_path):
    table = survey()
    model = CopulaSynthesizer(infer_spec(table), RunConfig(short_run, responses="none"), seed=0).fit(table)
    assert not {c.source for c in model.columns_} & {"hs", "tax", "region", "death"}
    assert model.response_summary()["derived"] == ["tax from state", "region from district", "hs from edu",
                                                   "death from yrdth"]
    assert model.response_summary()["refined"] == ["years within edu"]
    syn, info = model.sample(n_rows=5000, seed=2, return_info=True)
    assert (syn["hs"] == syn["edu"].isin(["hs", "college", "grad"])).all()
    # the classes keep their level columns, and years are drawn again within a row's class
    # where the copula put them in another
    assert (syn["edu"] == pd.cut(syn["years"], EDU_BINS, labels=["none", "some", "hs", "college", "grad"])
            .astype(str)).all()
    assert 0 < info["redrawn_share/years"] < 0.5
    assert abs(syn["years"].mean() - table["years"].mean()) < 0.25
    shares = syn["edu"].value_counts(normalize=True)
    assert (shares - table["edu"].value_counts(normalize=True)).abs().max() < 0.03
    pairs = set(zip(table["state"], table["tax"]))
    assert all(pair in pairs for pair in zip(syn["state"], syn["tax"]))
    assert (syn["region"] == syn["district"].map(dict(zip(table["district"], table["region"])))).all()
    assert (syn["death"] == syn["yrdth"].notna()).all()
    # the source carries the derived column's links: income still rises with the flag
    gap = np.log(syn["income"]).groupby(syn["hs"]).mean().diff().iloc[-1]
    real_gap = np.log(table["income"]).groupby(table["hs"]).mean().diff().iloc[-1]
    assert real_gap > 0.3 and gap > 0.5 * real_gap   # a lookup from another row would give about 0
    assert abs(syn["death"].mean() - table["death"].mean()) < 0.03
    path = tmp_path / "model.npz"
    model.save(path)
    again = CopulaSynthesizer.load(path).sample(n_rows=5000, seed=2)
    pd.testing.assert_frame_equal(again, syn)


def thresholds(n: int = 1500, seed: int = 5) -> pd.DataFrame:
    """A continuous age with its child flag (under 18), a continuous income with a low-income
    flag, a flag that is the over-60 rule but for one row, and visits that rise with age
    without being a function of it."""
    rng = np.random.default_rng(seed)
    age = np.round(rng.uniform(0, 85, n), 4)
    income = np.round(np.exp(rng.normal(10, 0.6, n)), 2)
    senior = (age > 60).astype(int)
    senior[np.flatnonzero(age > 60)[0]] = 0
    return pd.DataFrame({"age": age, "child": (age < 18).astype(int), "income": income,
                         "low": (income < 15_000).astype(int),
                         "senior": senior, "visits": rng.poisson(1 + age / 20)})


def test_a_recode_of_a_smoothed_column_by_thresholds_is_derived():
    """Age and income are continuous (their marginals smooth), so neither is a source under the
    exact-function rule; the flags hold one interval each, and are derived. One row off the
    over-60 rule keeps that flag modelled."""
    table = thresholds()
    spec = infer_spec(table)
    found = {d.name: d for d in find_derivations(spec, to_codes(table, spec))}
    assert {name: d.source for name, d in found.items()} == {"child": "age", "low": "income"}
    child = found["child"]
    first_adult = table.loc[table["age"] >= 18, "age"].min()
    assert list(child.keys) == [table["age"].min(), first_adult]
    assert list(child.apply(np.array([-3.0, 0.0, 17.99, first_adult, 40.0, 200.0]))) == [1, 1, 1, 0, 0, 0]


def test_a_recode_by_thresholds_holds_in_every_synthetic_row(short_run):
    table = thresholds()
    model = CopulaSynthesizer(infer_spec(table), RunConfig(short_run, responses="none"), seed=0).fit(table)
    assert not {c.source for c in model.columns_} & {"child", "low"}
    syn = model.sample(n_rows=5000, seed=2)
    first_adult = table.loc[table["age"] >= 18, "age"].min()   # the rule as the real rows show it
    assert (syn["child"] == (syn["age"] < first_adult)).all()
    assert (syn["low"] == (syn["income"] < table.loc[table["low"] == 0, "income"].min())).all()
    assert abs(syn["child"].mean() - table["child"].mean()) < 0.03
    # the link to the rest goes through age: children still make fewer visits
    gap = syn.groupby("child")["visits"].mean().diff().iloc[-1]
    real_gap = table.groupby("child")["visits"].mean().diff().iloc[-1]
    assert real_gap < -1.5 and gap < 0.5 * real_gap   # a lookup from another row would give about 0


def test_derived_none_models_every_column(short_run):
    table = survey(n=600)
    model = CopulaSynthesizer(infer_spec(table, {"derived": "none"}), RunConfig(short_run, responses="none"),
                              seed=0).fit(table)
    assert model.derived_ == []
    assert {"hs", "tax"} <= {c.source for c in model.columns_}
    with pytest.raises(InputError, match="`derived` must be auto"):
        infer_spec(table, {"derived": "yes"})


def test_the_screen_leaves_a_refinement_to_its_exact_link(short_run):
    """The classes are a step function of years: boosting predicts them far better than a
    linear model, but the refinement keeps the step exactly, so `responses: auto` models
    neither by BART (BART would break the step in some rows) and says why."""
    table = survey()
    model = CopulaSynthesizer(infer_spec(table), short_run, seed=0).fit_marginals(table)
    scores = {s.name: s for s in model.screen_.scores}
    assert scores["edu"].gain > 0.3
    assert not {"edu", "years"} & set(model.screen_.order)
    assert "exact link with years" in scores["edu"].reason
    assert [f"{r.name} within {r.by}" for r in model.refined_] == ["years within edu"]
