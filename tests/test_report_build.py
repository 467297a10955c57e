"""The assembled report, the release decision and `mixsynth report`, on small seeded tables."""
import json

import numpy as np
import pandas as pd
import pytest
import yaml
from threadpoolctl import threadpool_limits

from mixsynth import CopulaSynthesizer
from mixsynth.cli import main
from mixsynth.report.build import SCHEMA, build_report
from mixsynth.report.measures import HEADLINE_MEASURES
from mixsynth.report.release import decide
from mixsynth.schema import infer_spec
from mixsynth.tableio import InputError
from tables import gaussian_copula_table

N = 2000
RULES = [{"measure": "mean_cio", "min": 0.5, "limitation": "regression intervals may differ from the real file's"},
         {"measure": "max_cramers_v_drop", "max": 0.1},
         {"measure": "exact_copies", "max": 0},
         {"measure": "max_attribute_lift", "max": 0.05}]
RAW = {"columns": {"region": {"role": "quasi_identifier"}, "visits": {"role": "quasi_identifier"},
                   "smoker": {"role": "sensitive"}},
       "report": {"crosstabs": [["smoker", "region"]],
                  "group_statistics": [{"stat": "mean", "column": "income", "by": "region",
                                        "where": "visits >= 1"}],
                  "regressions": [{"formula": "np.log(income) ~ visits + C(smoker) + C(region)"}],
                  "tstr": [{"target": "income"}],
                  "outliers": [{"public": "income", "sensitive": "visits", "k": 20}]},
       "release": {"intended_uses": "teaching", "rules": RULES}}


@pytest.fixture(autouse=True)
def one_thread():
    with threadpool_limits(1):
        yield


@pytest.fixture(scope="module")
def tables():
    real = gaussian_copula_table(N, 11)
    rng = np.random.default_rng(0)
    permuted = real.apply(lambda c: c.sample(frac=1, random_state=int(rng.integers(1e9))).to_numpy())
    other = gaussian_copula_table(N, 12)
    boot = other.iloc[rng.integers(0, N, N)].reset_index(drop=True)
    return {"real": real, "permuted": permuted, "boot": boot, "holdout": gaussian_copula_table(N // 4, 13)}


def _assert_no_real_row(text: str, *frames: pd.DataFrame):
    for frame in frames:
        for row in frame.itertuples(index=False):
            assert not all(str(v) in text for v in row)


def test_permuted_columns_lose_associations_and_are_rejected(tables):
    spec = infer_spec(tables["real"], RAW)
    report = build_report(tables["real"], [tables["permuted"]], spec, holdout=tables["holdout"])
    assert report["schema"] == SCHEMA and set(report["headline"]) == set(HEADLINE_MEASURES)
    flagged = [(p["a"], p["b"]) for p in report["associations"]["categorical_pairs"] if p["flag"]]
    assert ("smoker", "region") in flagged
    assert report["headline"]["max_cramers_v_drop"] > 0.1
    assert report["crosstabs"][0]["a"] == "smoker" and report["tstr"][0]["target"] == "income"
    decision = decide(report, RAW["release"])
    assert decision["decision"] == "reject"
    failed = {r["measure"] for r in decision["rules"] if not r["passed"]}
    assert {"max_cramers_v_drop", "mean_cio"} <= failed
    # a rule on the gradient-boosting propensity score (0.742 here, 0.72-0.74 over six seeds)
    assert decide(report, {"rules": [{"measure": "propensity_auc", "max": 0.6}]})["decision"] == "reject"
    text = json.dumps(report, allow_nan=False)
    _assert_no_real_row(text, tables["real"], tables["holdout"])


def test_the_projects_own_synthesizer_keeps_most_of_the_association_the_crude_one_loses(tables, short_run):
    """The guide's contrast: the permuted file loses smoker x region entirely; the copula's
    file keeps most of it and copies no row. Known weakness, measured: with the default
    number of factors (k = 5 here) the copula attenuates this V (0.365) to 0.26-0.32, and
    with k = 2 it keeps it (0.30-0.41 over four files); see the closing note of issue 3."""
    spec = infer_spec(tables["real"], RAW)
    model = CopulaSynthesizer(spec, short_run, seed=5).fit(tables["real"])
    ours = build_report(tables["real"], [model.sample(seed=5)], spec, holdout=tables["holdout"])
    crude = build_report(tables["real"], [tables["permuted"]], spec, holdout=tables["holdout"])
    pair = lambda r: next(p for p in r["associations"]["categorical_pairs"] if {p["a"], p["b"]} == {"smoker", "region"})
    assert pair(ours)["v_real"] > 0.3 and pair(crude)["v_synthetic"] < 0.05
    assert pair(ours)["v_synthetic"] > 0.6 * pair(ours)["v_real"]
    # regression intervals: 0.37 for ours (the attenuation above), -2.96 for the crude file
    assert ours["headline"]["exact_copies"] == 0 and ours["headline"]["mean_cio"] > 0.2 > 0 > crude["headline"]["mean_cio"]
    # real against synthetic rows: 0.513 for ours (0.50-0.51 with seeds 6, 7), 0.742 for the crude file
    assert ours["headline"]["propensity_auc"] < 0.56 and crude["headline"]["propensity_auc"] > 0.65


def test_convergence_enters_the_headline_and_a_rule_can_require_it(tables):
    spec = infer_spec(tables["real"], RAW)
    conv = {"rhat_max": 1.42, "ess_bulk_min": 6.0, "rhat_median": 1.01}
    report = build_report(tables["real"], [tables["boot"]], spec, holdout=tables["holdout"], convergence=conv)
    assert report["convergence"] == conv
    assert (report["headline"]["max_rhat"], report["headline"]["min_ess_bulk"]) == (1.42, 6.0)
    rules = {"rules": [{"measure": "max_rhat", "max": 1.1}, {"measure": "min_ess_bulk", "min": 100}]}
    decision = decide(report, rules)
    assert decision["decision"] == "reject" and not any(r["passed"] for r in decision["rules"])
    unconverged = build_report(tables["real"], [tables["boot"]], spec)
    assert unconverged["headline"]["max_rhat"] is None and any("convergence" in n for n in unconverged["notes"])
    assert decide(unconverged, rules)["decision"] == "reject"        # not measured: no release


def test_bootstrap_of_independent_sample_passes_and_combines(tables):
    spec = infer_spec(tables["real"], RAW)
    second = tables["boot"].sample(frac=1, replace=True, random_state=1).reset_index(drop=True)
    report = build_report(tables["real"], [tables["boot"], second], spec, holdout=tables["holdout"])
    reg = report["regressions"][0]
    assert reg["combined"]["m"] == 2 and report["headline"]["mean_cio"] == reg["combined"]["mean_cio"]
    assert report["rows"] == {"real": N, "synthetic": [N, N], "m": 2, "holdout": N // 4}
    decision = decide(report, RAW["release"])
    assert decision["decision"] == "release", decision
    assert report["headline"]["exact_copies"] == 0 and report["notes"] == [
        "convergence: not given (report from files only; pass the model to include it)"]


def test_without_holdout_the_holdout_measures_are_none_with_a_note(tables):
    spec = infer_spec(tables["real"], RAW)
    report = build_report(tables["real"].iloc[:300], [tables["boot"].iloc[:300]], spec)
    assert report["tstr"] is None and report["risk"]["dcr"] is None
    assert report["headline"]["dcr_share_below_holdout_q05"] is None
    assert any(n.startswith("tstr") for n in report["notes"]) and any("dcr" in n for n in report["notes"])


def test_bad_report_section_is_an_input_error(tables):
    with pytest.raises(InputError, match="nosuch"):
        build_report(tables["real"], [tables["boot"]], infer_spec(tables["real"], {"report": {"crosstabs": [["smoker", "nosuch"]]}}))
    with pytest.raises(InputError, match="unknown key"):
        build_report(tables["real"], [tables["boot"]], infer_spec(tables["real"], {"report": {"plots": 1}}))


def _report(**headline):
    return {"schema": SCHEMA, "headline": {m: None for m in HEADLINE_MEASURES} | headline}


def test_decide_passing_failing_limited_and_unknown():
    good = _report(mean_cio=0.8, max_cramers_v_drop=0.02, exact_copies=0, max_attribute_lift=0.01)
    d = decide(good, RAW["release"])
    assert d["decision"] == "release" and all(r["passed"] for r in d["rules"]) and d["limitations"] == []
    assert d["rules"][0]["threshold"] == ">= 0.5" and d["intended_uses"] == "teaching"

    limited = decide(_report(mean_cio=0.4, max_cramers_v_drop=0.02, exact_copies=0, max_attribute_lift=0.01),
                     RAW["release"])
    assert limited["decision"] == "release with limitations"
    rule = limited["rules"][0]
    assert not rule["passed"] and rule["passes_with_limitation"] and rule["limitation"] == RULES[0]["limitation"]
    assert limited["limitations"] == [RULES[0]["limitation"]]

    failing = decide(_report(mean_cio=0.8, max_cramers_v_drop=0.02, exact_copies=3, max_attribute_lift=0.01),
                     RAW["release"])
    assert failing["decision"] == "reject"
    assert [r["measure"] for r in failing["rules"] if not r["passed"]] == ["exact_copies"]
    assert not failing["rules"][2]["passes_with_limitation"]

    unmeasured = decide(_report(mean_cio=0.8, max_cramers_v_drop=0.02, exact_copies=0), RAW["release"])
    assert unmeasured["decision"] == "reject" and unmeasured["rules"][3]["reason"] == "not measured"
    # a limitation text does not excuse a measure that was never computed
    blind = decide(_report(max_cramers_v_drop=0.02, exact_copies=0, max_attribute_lift=0.01), RAW["release"])
    assert blind["decision"] == "reject" and not blind["rules"][0]["passes_with_limitation"]

    with pytest.raises(InputError, match="'cio'.*mean_cio"):
        decide(good, {"rules": [{"measure": "cio", "min": 0.7}]})
    with pytest.raises(InputError, match="min"):
        decide(good, {"rules": [{"measure": "mean_cio"}]})


def test_cli_report_end_to_end(tables, tmp_path, capsys):
    n = 600
    paths = {}
    for name, frame in (("real", tables["real"].iloc[:n]), ("syn1", tables["boot"].iloc[:n]),
                        ("syn2", tables["boot"].iloc[n:2 * n]), ("hold", tables["holdout"])):
        paths[name] = tmp_path / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(RAW))
    out = tmp_path / "out"
    assert main(["report", str(paths["real"]), str(paths["syn1"]), str(paths["syn2"]), "--spec", str(spec),
                 "--out", str(out), "--holdout", str(paths["hold"])]) == 0
    printed = capsys.readouterr().out
    for name in ("report.json", "decision.json", "summary.md", "report.html"):
        assert str(out / name) in printed
    report = json.loads((out / "report.json").read_text())
    decision = json.loads((out / "decision.json").read_text())
    summary = (out / "summary.md").read_text()
    assert report["rows"]["m"] == 2 and decision["decision"] in summary
    assert "max_cramers_v_drop" in summary and "| mean_cio |" in summary
    page = (out / "report.html").read_text()
    assert f"Decision: <b>{decision['decision']}</b>" in page
    assert page.count("data:image/png;base64,") == 3   # distributions, associations, coefficients
    for rule in decision["rules"]:
        assert rule["measure"] in page
    assert "Raghunathan, Reiter and Rubin (2003)" in page          # m = 2: combined intervals
    real = pd.read_csv(paths["real"])
    for text in ((out / "report.json").read_text(), summary, page):
        _assert_no_real_row(text, real, tables["real"].iloc[:n])

    spec.write_text(yaml.safe_dump({"release": {"rules": [{"measure": "nope", "max": 1}]}}))
    assert main(["report", str(paths["real"]), str(paths["syn1"]), "--spec", str(spec), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "unknown measure 'nope'" in err and len(err.strip().splitlines()) == 1


def test_regression_where_fits_the_same_rows_of_both_files(tables):
    """`where` keeps the rows a regression is defined on (log of a column with zeros), in the
    real and the synthetic file alike."""
    real = tables["real"].assign(income=tables["real"]["income"].where(tables["real"]["visits"] != 0, 0.0))
    boot = tables["boot"].assign(income=tables["boot"]["income"].where(tables["boot"]["visits"] != 0, 0.0))
    kept = lambda t: int((t["income"] > 0).sum())
    raw = {"report": {"regressions": [{"formula": "np.log(income) ~ visits + C(smoker)", "where": "income > 0"}]}}
    report = build_report(real, [boot], infer_spec(real, raw))
    single = report["regressions"][0]["single"]
    assert (single["n_real"], single["n_synthetic"]) == (kept(real), kept(boot)) and kept(real) < N
    assert single["mean_cio"] > 0.3
