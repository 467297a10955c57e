"""The code location as Dagster loads it: `dagster definitions validate`, and the webserver's
GraphQL API listing every asset."""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
STAGES = ["raw_table", "marginal_estimates", "copula_posterior", "response_posterior", "synthetic_files",
          "utility_report", "disclosure_report", "release_decision", "published_release"]


@pytest.fixture
def dagster_env(tmp_path):
    """Environment for a Dagster process: its own DAGSTER_HOME (the shipped dagster.yaml)
    and stores in tmp_path, the default surveys (examples/)."""
    home = tmp_path / "dagster"
    home.mkdir()
    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    env = {**os.environ, "DAGSTER_HOME": str(home)}
    for var, sub in (("MIXSYNTH_CONFIDENTIAL_DIR", "confidential"), ("MIXSYNTH_RELEASE_DIR", "release"),
                     ("MIXSYNTH_LANDING_DIR", "landing")):
        env[var] = str(tmp_path / sub)
    env.pop("MIXSYNTH_SURVEYS", None)
    return env


def test_the_shipped_instance_queues_one_heavy_run_and_sends_nothing_home(dagster_env):
    import dagster as dg
    instance = dg.DagsterInstance.from_config(dagster_env["DAGSTER_HOME"])
    limits = instance.run_coordinator.get_run_queue_config().tag_concurrency_limits
    assert {"key": "mixsynth/heavy", "value": "true", "limit": 1} in limits
    assert not instance.telemetry_enabled and not instance.nux_enabled


def test_the_shipped_instances_print_info_lines_not_debug(instance):
    """dagster.yaml and docker/dagster.yaml: a run's console (make demo's terminal) shows the
    chains' progress at INFO without the engine's DEBUG lines (test_pipeline_faults.py reads
    that terminal)."""
    assert instance.python_log_level == "INFO"


def test_definitions_validate(dagster_env):
    done = subprocess.run([BIN / "dagster", "definitions", "validate", "-w", "workspace.yaml"], cwd=ROOT,
                          env=dagster_env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]


def test_webserver_lists_every_asset_over_graphql(dagster_env):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([BIN / "dagster-webserver", "-w", "workspace.yaml", "-h", "127.0.0.1", "-p", str(port)],
                              cwd=ROOT, env=dagster_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(f"{url}/server_info", timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                assert server.poll() is None, "the webserver exited"
                assert time.monotonic() < deadline, "the webserver did not answer in time"
                time.sleep(1)
        query = json.dumps({"query": "{ assetNodes { assetKey { path } } }"}).encode()
        keys = None
        while keys is None or not keys:   # the code location may still be loading
            request = urllib.request.Request(f"{url}/graphql", data=query, headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=30) as r:
                keys = {"/".join(n["assetKey"]["path"]) for n in json.load(r)["data"]["assetNodes"]}
            assert keys or time.monotonic() < deadline, "no assets listed"
            time.sleep(0 if keys else 1)
        assert keys == {f"ncbirths/{s}" for s in STAGES}
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
