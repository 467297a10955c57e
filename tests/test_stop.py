"""A stopped command leaves nothing computing and nothing half-written (issue 35, part 1):
real processes, each `mixsynth synthesize` started in its own session so that every
process it starts (the spawned chain workers) can be found by session id afterwards."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

MIXSYNTH = str(Path(sys.executable).with_name("mixsynth"))


def session_members(sid: int) -> list[int]:
    """Process ids of the live (not zombie) processes in session ``sid``, from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()   # after "pid (comm) ": state, ppid, pgrp, session
        if int(fields[3]) == sid and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def gone(sid: int, within: float) -> bool:
    """Whether session ``sid`` has no live process left within ``within`` seconds."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        if not session_members(sid):
            return True
        time.sleep(0.2)
    return not session_members(sid)


@pytest.fixture
def sampling(tmp_path):
    """A synthesize command with two chains far too long to finish, once both chain workers
    run; yields (process, out folder); kills whatever is left of its session at the end."""
    rng = np.random.default_rng(0)
    z = rng.standard_normal((300, 3))
    pd.DataFrame({"a": z[:, 0], "b": z[:, 0] + z[:, 1], "c": np.where(z[:, 2] > 0, "x", "y")}).to_csv(
        tmp_path / "real.csv", index=False)
    out = tmp_path / "out"
    proc = subprocess.Popen([MIXSYNTH, "synthesize", str(tmp_path / "real.csv"), "--out", str(out / "syn.csv"),
                             "--model", str(out / "model.npz"), "--sweeps", "4000000", "--chains", "2",
                             "--no-progress"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        for line in proc.stdout:
            if line.startswith("sampling"):
                break
        end = time.monotonic() + 60
        while len(session_members(proc.pid)) < 3 and time.monotonic() < end:   # the command and 2 workers
            time.sleep(0.2)
        assert len(session_members(proc.pid)) >= 3, "the chain workers did not start"
        time.sleep(1.0)
        yield proc, out
    finally:
        for pid in session_members(proc.pid):
            os.kill(pid, signal.SIGKILL)
        proc.wait(timeout=10)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_command_ends_its_workers_and_writes_nothing(sampling, signum):
    proc, out = sampling
    os.kill(proc.pid, signum)
    assert proc.wait(timeout=10) == 128 + signum
    err = proc.stderr.read().strip()
    assert err == (f"mixsynth: stopped by {signal.Signals(signum).name} during 'synthesize': its workers have "
                   "ended and no file is half-written")
    assert gone(proc.pid, within=10), session_members(proc.pid)
    assert not out.exists() or not any(out.iterdir())


def test_the_workers_of_a_killed_command_end_on_their_own(sampling):
    """SIGKILL reaches no handler: each worker sees its parent gone and exits."""
    proc, _ = sampling
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    assert gone(proc.pid, within=10), session_members(proc.pid)
