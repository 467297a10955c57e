"""Anonymeter's attacks run in their own environment (make anonymeter-env) and come back as
rates only: a synthetic file that copies the training rows is singled out, an independent
sample of the same population is not."""
import json

import pytest

from mixsynth.report.anonymeter import ENV, anonymeter_python, anonymeter_risks
from mixsynth.report.build import build_report
from mixsynth.schema import infer_spec
from mixsynth.tableio import InputError
from tables import gaussian_copula_table

ROLES = {"columns": {"region": {"role": "quasi_identifier"}, "visits": {"role": "quasi_identifier"},
                     "smoker": {"role": "sensitive"}, "income": {"role": "sensitive"}}}


@pytest.fixture(scope="module")
def tables():
    real = gaussian_copula_table(500, 11)
    return {"real": real, "holdout": gaussian_copula_table(200, 13), "independent": gaussian_copula_table(500, 12),
            "spec": infer_spec(real, ROLES)}


def test_a_copy_is_singled_out_and_an_independent_sample_is_not(tables):
    python = anonymeter_python()
    if python is None:
        pytest.fail(f"no anonymeter environment: run `make anonymeter-env` or set {ENV}")
    t = tables
    copy = anonymeter_risks(t["real"], t["real"].copy(), t["holdout"], t["spec"], python, 150, seed=0)
    indep = anonymeter_risks(t["real"], t["independent"], t["holdout"], t["spec"], python, 150, seed=0)
    assert copy["singling_out"]["risk"] > 0.5 and copy["singling_out"]["risk_ci95"][0] > 0.3
    assert indep["singling_out"]["risk_ci95"][0] < 0.05
    assert [i["column"] for i in copy["inference"]] == ["income", "smoker"]
    assert copy["linkability"]["aux_cols"] == [["visits", "region"], ["income", "smoker"]]
    text = json.dumps(copy)
    for row in t["real"].itertuples(index=False):       # rates only, never a record
        assert not all(str(v) in text for v in row)


def test_without_the_environment_the_report_says_so_and_rules_see_none(tables, monkeypatch, tmp_path):
    monkeypatch.setenv(ENV, str(tmp_path / "no-python"))
    t = tables
    spec = infer_spec(t["real"], {**ROLES, "report": {"anonymeter": {"n_attacks": 100}}})
    report = build_report(t["real"], [t["independent"]], spec, holdout=t["holdout"])
    assert report["risk"]["anonymeter"] is None and report["headline"]["anonymeter_singling_out"] is None
    assert any("anonymeter environment" in n for n in report["notes"])
    with pytest.raises(InputError, match="report.anonymeter"):
        build_report(t["real"], [t["independent"]],
                     infer_spec(t["real"], {**ROLES, "report": {"anonymeter": {"attacks": 5}}}))
