"""The daemon for real: `dagster-daemon run` on a Postgres instance with the shipped queue,
two surveys, files landing, the sensors, the run queue and the schedule."""
import signal
import time

import dagster as dg

from deployment import BIN, DONE, Deployment, wait_for
from pipeline_fixtures import land, small_table, survey_spec, write_survey
from services import stop_group

STARTED = dg.DagsterRunStatus.STARTED


def landing_run(records, survey, wave):
    found = [r for r in records if r.dagster_run.tags.get("dagster/sensor_name") == f"{survey}_landing"
             and r.dagster_run.tags.get("dagster/partition") == wave]
    return found[0] if found else None


def test_daemon_runs_landed_waves_one_at_a_time_through_the_queue_and_the_schedule_starts_the_latest(
        tmp_path, postgres_env):
    dep = Deployment.create(tmp_path, postgres_env, MIXSYNTH_SENSOR_SECONDS="3")
    tiny = survey_spec("tiny")
    tiny["survey"]["schedule"] = "* * * * *"       # a tick every minute, so the test sees one
    write_survey(dep.folder / "surveys", tiny)
    write_survey(dep.folder / "surveys", survey_spec("other"))
    # two surveys' waves land together, before the daemon starts
    land(dep.landing / "tiny" / "w1.csv", small_table(seed=5))
    land(dep.landing / "other" / "w1.csv", small_table(seed=9))

    instance = dep.instance()
    daemon = dep.popen([BIN / "dagster-daemon", "run", "-w", "workspace.yaml"], tmp_path / "daemon.log")
    alive = [(daemon, "dagster-daemon")]
    deadline = time.monotonic() + 900
    try:
        records = instance.get_run_records
        wait_for("a run started from the landing sensors", lambda: any(
            r.dagster_run.status == STARTED for r in records()), deadline, alive=alive)
        # a second tiny wave lands while a run goes
        land(dep.landing / "tiny" / "w2.csv", small_table(seed=6))
        w2 = wait_for("the sensor's run for tiny w2", lambda: landing_run(records(), "tiny", "w2"),
                      deadline, alive=alive)

        def finished():
            runs = records()
            wanted = [landing_run(runs, s, w) for s, w in (("tiny", "w1"), ("other", "w1"), ("tiny", "w2"))]
            scheduled = [r for r in runs if r.dagster_run.tags.get("dagster/schedule_name") == "tiny_latest_wave"
                         and r.create_timestamp > w2.create_timestamp]
            if all(r and r.dagster_run.status in DONE for r in wanted) and any(
                    r.dagster_run.status in DONE for r in scheduled):
                return runs
            return None
        runs = wait_for("the three landed waves and a scheduled run", finished, deadline, every=2, alive=alive)
    finally:
        stop_group(daemon, signal.SIGTERM, timeout=30)

    landed = {(s, w): landing_run(runs, s, w) for s, w in (("tiny", "w1"), ("other", "w1"), ("tiny", "w2"))}
    for (survey, wave), record in landed.items():
        run = record.dagster_run
        assert run.status == dg.DagsterRunStatus.SUCCESS, (survey, wave, run.status)
        assert run.job_name == f"{survey}_wave" and run.tags["mixsynth/heavy"] == "true"
        # launched through the queued run coordinator: enqueued, then launched and started
        kinds = [e.dagster_event.event_type for e in instance.all_logs(run.run_id) if e.dagster_event]
        assert kinds.index(dg.DagsterEventType.RUN_ENQUEUED) < kinds.index(dg.DagsterEventType.RUN_STARTING) \
            < kinds.index(dg.DagsterEventType.RUN_START)
        assert (dep.release / survey / wave / "synthetic.csv").is_file()
        assert (dep.release / survey / wave / "record.json").is_file()
    assert instance.get_dynamic_partitions("tiny_waves") == ["w1", "w2"]
    assert instance.get_dynamic_partitions("other_waves") == ["w1"]

    # one heavy run at a time: no two runs' start..end overlap
    spans = sorted((r.start_time, r.end_time) for r in runs if r.start_time and r.end_time)
    print("run spans (s from the first start):", [(round(a - spans[0][0], 1), round(b - spans[0][0], 1))
                                                  for a, b in spans])
    assert len(spans) >= 4
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(spans, spans[1:])), spans
    # w2 was requested while another run went, and started only once that run had ended
    created = w2.create_timestamp.timestamp()
    going = [r for r in runs if r.start_time and r.start_time < created < (r.end_time or float("inf"))]
    assert going, "tiny w2 was not requested while another run went"
    assert landed["tiny", "w2"].start_time >= going[0].end_time

    # the schedule's tick after w2 was added resynthesized the latest wave, w2
    scheduled = [r for r in runs if r.dagster_run.tags.get("dagster/schedule_name") == "tiny_latest_wave"]
    after = [r for r in scheduled if r.create_timestamp > w2.create_timestamp and r.dagster_run.status in DONE]
    assert after and all(r.dagster_run.tags["dagster/partition"] == "w2" for r in after)
    assert after[0].dagster_run.status == dg.DagsterRunStatus.SUCCESS
    assert all(r.dagster_run.tags["dagster/partition"] == "w1" for r in scheduled
               if r.create_timestamp < w2.create_timestamp)
    instance.dispose()
