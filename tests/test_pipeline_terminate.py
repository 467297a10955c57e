"""Terminating a run as the UI does (issue 35): the daemon launches a landed wave's run on a
Postgres instance; once its chains sample, the run launcher's terminate (what the UI's
Terminate button calls) stops it, and no step process of the run is left computing."""
import signal
import time

import dagster as dg

from deployment import BIN, Deployment, step_events, wait_for
from pipeline_fixtures import land, small_table, survey_spec, write_survey
from services import stop_group

CHAIN = "tiny__copula_posterior.tiny_run_chain"   # the chain steps: CHAIN[chain_0], ...
STOPPED = {dg.DagsterRunStatus.CANCELED, dg.DagsterRunStatus.FAILURE}


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            stat = fh.read()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def test_terminating_a_run_stops_its_chain_steps_within_30_seconds(tmp_path, postgres_env):
    dep = Deployment.create(tmp_path, postgres_env, MIXSYNTH_SENSOR_SECONDS="3")
    spec = survey_spec("tiny")
    spec["sampler"] = {"sweeps": 4_000_000, "burn_in": 2_000_000, "thin": 4000, "chains": 2}   # hours
    write_survey(dep.folder / "surveys", spec)
    land(dep.landing / "tiny" / "w1.csv", small_table(seed=5))
    instance = dep.instance()
    daemon = dep.popen([BIN / "dagster-daemon", "run", "-w", "workspace.yaml"], tmp_path / "daemon.log")
    deadline = time.monotonic() + 300
    try:
        run_id = wait_for("the landing sensor's run", lambda: next(
            (r.run_id for r in instance.get_runs()), None), deadline, alive=[(daemon, "dagster-daemon")])
        wait_for("both chains sampling", lambda: all(   # each logs its plan as it starts sampling
            any((e.user_message or "").startswith(f"chain {c}: ") and "thread(s)" in (e.user_message or "")
                for e in instance.all_logs(run_id)) for c in (0, 1)),
            deadline, every=0.5, alive=[(daemon, "dagster-daemon")])
        time.sleep(3)
        steps = [e.dagster_event.pid for c in (0, 1)
                 for e in step_events(instance, run_id, dg.DagsterEventType.STEP_START, f"{CHAIN}[chain_{c}]")]
        assert len(steps) == 2 and all(alive(pid) for pid in steps)

        asked = time.monotonic()
        assert instance.run_launcher.terminate(run_id)   # the UI's Terminate
        wait_for("the run to stop", lambda: instance.get_run_by_id(run_id).status in STOPPED,
                 asked + 30, every=0.5)
        wait_for("the chain steps to end", lambda: not any(alive(pid) for pid in steps), asked + 30, every=0.5)
        stopped_in = time.monotonic() - asked
    finally:
        stop_group(daemon, signal.SIGTERM, timeout=30)
    print(f"\nterminated: run {instance.get_run_by_id(run_id).status.value}, chain steps gone in {stopped_in:.1f} s")
    assert not (dep.release / "tiny" / "w1").exists()
    instance.dispose()
