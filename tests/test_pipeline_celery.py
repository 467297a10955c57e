"""dagster-celery for real: a redis-server broker on loopback, two celery workers, a wave run
on the Postgres instance with MIXSYNTH_EXECUTOR=celery and three chain slots declared
(MIXSYNTH_CHAIN_SLOTS): the spec names no chain count, so the wave runs three chains."""
import signal
import time

import dagster as dg
import pytest

from deployment import BIN, ROOT, Deployment, files, wait_for
from pipeline_fixtures import land, small_table, survey_spec, write_survey
from services import RedisServer, stop_group

WAVE = "2026-q1"
CHAIN = "tiny__copula_posterior.tiny_run_chain"   # the chain steps: CHAIN[chain_0], ...
STEPS = {"tiny__raw_table", "tiny__marginal_estimates", "tiny__copula_posterior.tiny_list_chains",
         f"{CHAIN}[chain_0]", f"{CHAIN}[chain_1]", f"{CHAIN}[chain_2]", "tiny__copula_posterior.tiny_combine_chains",
         "tiny__response_posterior", "tiny__synthetic_files", "tiny_reports", "tiny__release_decision",
         "tiny__published_release"}


@pytest.fixture
def redis():
    server = RedisServer.start()
    try:
        yield server
    finally:
        server.stop()


def celery_workers(dep, names, folder):
    """Start one dagster-celery worker per name (one task at a time each) with the shipped
    celery.yaml, each once the one before says it is ready; return them. Started at once on a
    fresh database, two workers both create Dagster's tables and one dies on the other's
    ("type runs already exists")."""
    workers = []
    deadline = time.monotonic() + 120
    for name in names:
        log = folder / f"{name}.log"
        process = dep.popen([BIN / "dagster-celery", "worker", "start", "-A", "dagster_celery.app",
                             "-y", str(ROOT / "celery.yaml"), "-n", name, "--", "--concurrency=1"], log)
        workers.append(process)
        try:
            wait_for(f"celery worker {name}", lambda: b" ready." in log.read_bytes(), deadline,
                     alive=[(process, f"celery worker {name}")])
        except AssertionError:   # the ones already started end with the test
            for worker in workers:
                stop_group(worker, signal.SIGTERM, timeout=30)
            raise
    return workers


def test_celery_workers_run_each_step_as_a_task_and_give_the_in_process_file(tmp_path, postgres_env, redis,
                                                                          monkeypatch):
    dep = Deployment.create(tmp_path / "celery", postgres_env, MIXSYNTH_EXECUTOR="celery", MIXSYNTH_CHAIN_SLOTS="3",
                            MIXSYNTH_CELERY_BROKER=f"{redis.url}/0", MIXSYNTH_CELERY_BACKEND=f"{redis.url}/1")
    spec = survey_spec()
    del spec["sampler"]["chains"]   # the default: one chain a slot
    write_survey(dep.folder / "surveys", spec)
    real = small_table()
    land(dep.landing / "tiny" / f"{WAVE}.csv", real)

    workers = celery_workers(dep, ["w1", "w2"], tmp_path)
    try:
        started = time.monotonic()
        run = dep.pipeline_run("tiny", WAVE, tmp_path / "run.log")
        assert run.wait(timeout=600) == 0, (tmp_path / "run.log").read_text()[-3000:]
        celery_seconds = time.monotonic() - started
    finally:
        for worker in workers:
            stop_group(worker, signal.SIGTERM, timeout=30)

    instance = dep.instance()
    [record] = instance.get_run_records()
    assert record.dagster_run.status == dg.DagsterRunStatus.SUCCESS
    # every step ran as a celery task; the three chains as three tasks, on both workers
    worker_of = {}
    for event in instance.all_logs(record.dagster_run.run_id, of_type=dg.DagsterEventType.ENGINE_EVENT):
        if (event.dagster_event.message or "").endswith("in celery worker"):
            assert event.step_key not in worker_of, f"{event.step_key} ran twice"
            worker_of[event.step_key] = event.dagster_event.engine_event_data.metadata["Celery worker"].value
    assert set(worker_of) == STEPS, sorted({(e.dagster_event.message or "")[:80] for e in instance.all_logs(
        record.dagster_run.run_id, of_type=dg.DagsterEventType.ENGINE_EVENT)})
    assert {worker_of[f"{CHAIN}[chain_{c}]"].split("@")[0] for c in (0, 1, 2)} == {"w1", "w2"}
    instance.dispose()

    # the same wave in process: byte-identical synthetic file and release record
    local = tmp_path / "local"
    for var, sub in (("MIXSYNTH_CONFIDENTIAL_DIR", "confidential"), ("MIXSYNTH_RELEASE_DIR", "release"),
                     ("MIXSYNTH_LANDING_DIR", "landing")):
        monkeypatch.setenv(var, str(local / sub))
    monkeypatch.delenv("MIXSYNTH_EXECUTOR", raising=False)
    monkeypatch.setenv("MIXSYNTH_CHAIN_SLOTS", "3")
    land(local / "landing" / "tiny" / f"{WAVE}.csv", real)
    from pipeline.definitions import build_definitions
    in_process = dg.DagsterInstance.ephemeral()
    in_process.add_dynamic_partitions("tiny_waves", [WAVE])
    started = time.monotonic()
    result = build_definitions(write_survey(local / "surveys", spec)).resolve_job_def(
        "tiny_wave").execute_in_process(partition_key=WAVE, instance=in_process)
    local_seconds = time.monotonic() - started
    assert result.success
    released, expected = files(dep.release / "tiny" / WAVE), files(local / "release" / "tiny" / WAVE)
    assert released["synthetic.csv"] == expected["synthetic.csv"]
    assert released["record.json"] == expected["record.json"]   # the record has no timings
    print(f"celery run {celery_seconds:.1f} s (python -m pipeline.run, two workers); "
          f"in process {local_seconds:.1f} s")
