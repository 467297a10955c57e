"""Faults: a chain step killed mid-run, a full release store. (Two surveys' waves submitted
together are in test_pipeline_daemon.py.)"""
import errno
import os
import shutil
import signal
import subprocess
import time

import dagster as dg
import numpy as np
import pandas as pd

from deployment import Deployment, files, step_events, wait_for
from mixsynth import CopulaSynthesizer
from mixsynth.landing import file_digest
from pipeline_fixtures import land, small_table, survey_spec, write_survey
from services import stop_group

WAVE = "2026-q1"
CHAIN = "tiny__copula_posterior.tiny_run_chain"   # the chain steps: CHAIN[chain_0], ...
CHAIN_0 = f"{CHAIN}[chain_0]"


def readable(path):
    """Open a confidential file as the step that reads it would; raises if it is half-written."""
    if path.suffix == ".parquet":
        pd.read_parquet(path)
    elif path.name.startswith("model"):
        CopulaSynthesizer.load(path)
    elif path.suffix == ".npz":
        with np.load(path, allow_pickle=False) as f:
            [f[k] for k in f.files]
    elif path.suffix == ".json":
        import json
        json.loads(path.read_text())
    elif path.suffix == ".csv":
        pd.read_csv(path)


def test_a_chain_killed_mid_run_fails_the_run_and_reexecution_from_failure_completes_the_wave(tmp_path):
    """Chain 0's step is SIGKILLed at about half its sweeps; re-execution from failure goes on
    from its checkpoint (issue 35) and gives the draws of a chain never stopped."""
    dep = Deployment.create(tmp_path, MIXSYNTH_CHECKPOINT_SECONDS="0.2")
    spec = survey_spec()
    spec["sampler"] = {"sweeps": 20000, "burn_in": 10000, "thin": 100, "chains": 2}  # seconds a chain
    write_survey(dep.folder / "surveys", spec)
    landing = dep.landing / "tiny" / f"{WAVE}.csv"
    land(landing, small_table(seed=5))
    first = dep.pipeline_run("tiny", WAVE, tmp_path / "first.log")
    assert first.wait(timeout=600) == 0, (tmp_path / "first.log").read_text()[-3000:]
    release = dep.release / "tiny" / WAVE
    previous = files(release)
    # the terminal followed the chains (what make demo shows)
    shown = (tmp_path / "first.log").read_text()
    assert " - DEBUG - " not in shown
    assert f"{CHAIN_0} - chain 0: 2,000/20,000 sweeps (10%" in shown
    assert f"{CHAIN}[chain_1] - chain 1: 20,000/20,000 sweeps (100%" in shown

    land(landing, small_table(seed=11))   # a corrected file for the wave: the next run's input
    instance = dep.instance()
    run = dep.pipeline_run("tiny", WAVE, tmp_path / "killed.log")
    try:
        deadline = time.monotonic() + 300
        run_id = wait_for("the second run", lambda: len(instance.get_runs()) == 2, deadline,
                          alive=[(run, "pipeline.run")]) and instance.get_runs()[0].run_id   # newest first
        # kill chain 0's step process at about half its sweeps (its 50% line is logged)
        wait_for("chain 0 half-way", lambda: any(
            (e.user_message or "").startswith("chain 0: 10,000/20,000") for e in instance.all_logs(run_id)),
            deadline, every=0.2, alive=[(run, "pipeline.run")])
        [start] = step_events(instance, run_id, dg.DagsterEventType.STEP_START, CHAIN_0)
        os.kill(start.dagster_event.pid, signal.SIGKILL)
        assert run.wait(timeout=300) == 1
    finally:
        stop_group(run)
    killed = instance.get_run_by_id(run_id)
    assert killed.status == dg.DagsterRunStatus.FAILURE
    assert step_events(instance, run_id, dg.DagsterEventType.STEP_FAILURE, CHAIN_0)
    assert not step_events(instance, run_id, dg.DagsterEventType.STEP_SUCCESS, CHAIN_0)
    wave = dep.confidential / "tiny" / WAVE
    left = sorted(str(p.relative_to(wave)) for p in wave.rglob("*") if p.is_file())
    print("confidential files after the kill:", left)
    # the killed chain left no draws file, every file a later step reads is whole, and
    # anything half-written is only a temporary name no step reads
    assert not (wave / "chain-0.npz").exists()
    checkpoint = wave / "checkpoints" / "chain-0.npz"
    assert checkpoint.stat().st_mode & 0o077 == 0   # it holds Z: owner-only
    with np.load(checkpoint) as f:
        killed_at = __import__("json").loads(str(f["meta"]))["position"]["sweep"]
    assert 8_000 <= killed_at < 20_000
    for p in wave.rglob("*"):
        if p.is_file() and not p.name.endswith(".tmp"):
            readable(p)
    assert files(release) == previous, "the previous release changed"
    assert not [p for p in release.parent.iterdir() if p.name != WAVE], "staging left in the release store"

    again = dep.pipeline_run("tiny", WAVE, tmp_path / "again.log", "--from-failure", run_id)
    try:
        assert again.wait(timeout=600) == 0, (tmp_path / "again.log").read_text()[-3000:]
    finally:
        stop_group(again)
    [child] = [r for r in instance.get_runs() if r.parent_run_id == run_id]
    assert child.status == dg.DagsterRunStatus.SUCCESS and child.tags["dagster/partition"] == WAVE
    rerun = {e.step_key for e in instance.all_logs(child.run_id, of_type=dg.DagsterEventType.STEP_START)}
    assert CHAIN_0 in rerun and not rerun & {"tiny__raw_table", "tiny__marginal_estimates",
                                             "tiny__copula_posterior.tiny_list_chains", f"{CHAIN}[chain_1]"}
    released = files(release)
    assert released != previous and b'"fingerprint": "' + file_digest(landing).encode() in released["record.json"]
    assert (wave / "chain-0.npz").exists() and not (wave / "checkpoints").exists()
    went_on = [e.user_message for e in instance.all_logs(child.run_id) if "went on from its checkpoint" in
               (e.user_message or "")]
    assert went_on == [f"chain 0: went on from its checkpoint at sweep {killed_at:,}"]
    # the resumed chain's draws are those of chain 0 run whole, here, from the same stage
    model = CopulaSynthesizer.load(wave / "model-marginals.npz")
    whole = model.run_chain(pd.read_parquet(wave / "train.parquet"), 0)
    with np.load(wave / "chain-0.npz") as f:
        for key in whole:
            assert np.array_equal(f[key], whole[key]), key
    instance.dispose()


def small_tmpfs(folder, size: int):
    """Mount a tmpfs of ``size`` bytes at ``folder``; False when this machine refuses."""
    folder.mkdir()
    if os.geteuid() != 0 or not shutil.which("mount"):
        return False
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                          capture_output=True, text=True)
    return done.returncode == 0


def test_a_full_release_store_fails_publishing_with_one_line_and_keeps_the_previous_release(
        stores, monkeypatch, capsys):
    from pipeline.definitions import build_definitions
    land(stores / "landing" / "tiny" / f"{WAVE}.csv", small_table())
    folder = write_survey(stores / "surveys", survey_spec())
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("tiny_waves", [WAVE])
    assert build_definitions(folder).resolve_job_def("tiny_wave").execute_in_process(
        partition_key=WAVE, instance=instance).success
    previous = files(stores / "release" / "tiny" / WAVE)
    size = sum(len(b) for b in previous.values())

    # a release store holding the previous release with room for less than a second copy
    full = stores / "full"
    mounted = small_tmpfs(full, (size * 3 // 2 // 4096 + 1) * 4096)
    try:
        shutil.copytree(stores / "release" / "tiny", full / "tiny")
        if not mounted:   # no mount here: the copy fails as a full disk would
            real_copy = shutil.copyfile

            def copy_until_full(src, dst, *a, **k):
                if any(p.name.endswith(".new") for p in type(full)(dst).parents):
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(dst))
                return real_copy(src, dst, *a, **k)
            monkeypatch.setattr(shutil, "copyfile", copy_until_full)
        monkeypatch.setenv("MIXSYNTH_RELEASE_DIR", str(full))
        result = build_definitions(folder).resolve_job_def("tiny_wave").execute_in_process(
            partition_key=WAVE, instance=instance, raise_on_error=False,
            asset_selection=[dg.AssetKey(["tiny", "published_release"])])
        assert not result.success
        [failure] = result.get_step_failure_events()
        message = failure.step_failure_data.error.message.strip()
        assert "\n" not in message
        assert "tiny wave 2026-q1: not published" in message and "it is full (no space left on device)" in message
        assert "the previous release stays" in message
        assert files(full / "tiny" / WAVE) == previous
        assert sorted(p.name for p in (full / "tiny").iterdir()) == [WAVE], "staging left behind"
        with capsys.disabled():
            print(f"\nfull release store: {'tmpfs of ' + str(size * 3 // 2 // 4096 + 1) + ' pages' if mounted else 'simulated ENOSPC (mount refused)'}; "
                  f"message: {message}")
    finally:
        if mounted:
            subprocess.run(["umount", str(full)], check=True)
