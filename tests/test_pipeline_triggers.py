"""The landing sensor and the latest-wave schedule, evaluated directly."""
import os

import dagster as dg
import pytest

from mixsynth import InputError
from mixsynth.landing import file_digest
from mixsynth.survey import load_surveys
from pipeline_fixtures import land, small_table, survey_spec, write_survey
from resources import ConfidentialStore, LandingArea


@pytest.fixture
def location(tmp_path, monkeypatch):
    """Definitions of the tiny survey with its stores and landing root in tmp_path."""
    from pipeline.definitions import build_definitions
    for var, sub in (("MIXSYNTH_CONFIDENTIAL_DIR", "confidential"), ("MIXSYNTH_RELEASE_DIR", "release"),
                     ("MIXSYNTH_LANDING_DIR", "landing")):
        monkeypatch.setenv(var, str(tmp_path / sub))
    return build_definitions(write_survey(tmp_path / "surveys", survey_spec())), tmp_path / "landing" / "tiny"


def evaluate(defs, instance, cursor=None, root=None):
    sensor = defs.resolve_sensor_def("tiny_landing")
    resources = {"landing": LandingArea(root=str(root / "landing")),
                 "confidential": ConfidentialStore(root=str(root / "confidential"))}
    context = dg.build_sensor_context(instance=instance, cursor=cursor, resources=resources)
    return sensor(context)


def requested(result) -> list:
    return list(result.run_requests or [])


def test_sensor_new_file_once_incomplete_never_bad_file_fails_its_run_only(location):
    defs, folder = location
    instance = dg.DagsterInstance.ephemeral()
    land(folder / "2026-q1.csv", small_table())

    first = evaluate(defs, instance, root=folder.parent.parent)
    assert [(r.partition_key, r.tags["mixsynth/trigger"]) for r in first.run_requests] == [("2026-q1", "landing")]
    assert first.run_requests[0].run_key.startswith("tiny/2026-q1/")
    assert [r.partition_keys for r in first.dynamic_partitions_requests] == [["2026-q1"]]
    instance.add_dynamic_partitions("tiny_waves", ["2026-q1"])  # what the daemon does with the request

    again = evaluate(defs, instance, first.cursor, folder.parent.parent)
    assert requested(again) == [] and again.cursor == first.cursor

    land(folder / "2026-q2.csv", small_table(seed=6), age_seconds=0)      # still being written
    (folder / "2026-q3.csv.part").write_text("a,b\n")                       # an upload in progress
    assert requested(evaluate(defs, instance, first.cursor, folder.parent.parent)) == []

    land(folder / "2026-q1.csv", small_table(seed=7))                       # corrected under its name
    corrected = evaluate(defs, instance, first.cursor, folder.parent.parent)
    assert [r.partition_key for r in corrected.run_requests] == ["2026-q1"]
    assert corrected.run_requests[0].run_key != first.run_requests[0].run_key
    assert corrected.dynamic_partitions_requests == []  # a known wave

    land(folder / "2026-q4.csv", small_table().head(5))                     # too few rows
    bad = evaluate(defs, instance, corrected.cursor, folder.parent.parent)
    assert [r.partition_key for r in bad.run_requests] == ["2026-q4"]
    instance.add_dynamic_partitions("tiny_waves", ["2026-q4"])
    run = defs.resolve_job_def("tiny_wave").execute_in_process(
        partition_key="2026-q4", instance=instance, raise_on_error=False, tags=bad.run_requests[0].tags,
        asset_selection=[dg.AssetKey(["tiny", "raw_table"])])
    assert not run.success
    message = run.get_step_failure_events()[0].step_failure_data.error.cause.message
    assert "the table has 5 rows, fewer than the minimum of 20" in message
    after = evaluate(defs, instance, bad.cursor, folder.parent.parent)
    assert requested(after) == []

    done = land(folder / "2026-q5.csv", small_table(seed=8))              # already run by hand
    ConfidentialStore(root=str(folder.parent.parent / "confidential")).write_json(
        {"fingerprint": file_digest(done)}, "tiny", "2026-q5", "input.json")
    assert requested(evaluate(defs, instance, after.cursor, folder.parent.parent)) == []


def test_schedule_resynthesizes_the_latest_wave_at_the_spec_cron(location, instance):
    """Waves read from the instance's dynamic partitions: SQLite and Postgres storage."""
    defs, _ = location
    schedule = defs.resolve_schedule_def("tiny_latest_wave")
    assert schedule.cron_schedule == "15 4 * * *" and schedule.job_name == "tiny_wave"
    assert isinstance(schedule(dg.build_schedule_context(instance=instance)), dg.SkipReason)
    instance.add_dynamic_partitions("tiny_waves", ["2026-q1"])
    instance.add_dynamic_partitions("tiny_waves", ["2026-q2"])
    request = schedule(dg.build_schedule_context(instance=instance))
    assert request.partition_key == "2026-q2"


def test_survey_sections_are_checked(tmp_path):
    spec = survey_spec()
    spec["survey"]["cron"] = "0 3 * * *"
    with pytest.raises(InputError, match="unknown key.*cron"):
        load_surveys(write_survey(tmp_path, spec))
    assert load_surveys(os.path.dirname(__file__) + "/../examples")[0].name == "ncbirths"


def test_each_survey_gets_its_own_assets_job_schedule_and_sensor(tmp_path):
    from pipeline.definitions import build_definitions
    folder = write_survey(tmp_path, survey_spec("tiny"))
    write_survey(folder, survey_spec("other"))
    defs = build_definitions(folder)
    keys = {k.to_user_string() for k in defs.resolve_asset_graph().get_all_asset_keys()}
    stages = {"raw_table", "marginal_estimates", "copula_posterior", "response_posterior",
              "synthetic_files", "utility_report", "disclosure_report", "release_decision",
              "published_release"}
    assert keys == {f"{name}/{stage}" for name in ("tiny", "other") for stage in stages}
    for name in ("tiny", "other"):
        assert defs.resolve_sensor_def(f"{name}_landing").job_name == f"{name}_wave"
        assert defs.resolve_schedule_def(f"{name}_latest_wave").job_name == f"{name}_wave"
