"""A chain stopped part-way resumes from its checkpoint and gives the draws, bit for bit, of
a chain never stopped (issue 35, parts 2 and 3): in-process, and as real processes with
`mixsynth fit --resume` after a SIGKILL."""
import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mixsynth.checkpoint import Checkpoint
from mixsynth.diagnostics import judged_entries
from mixsynth.model import CopulaSynthesizer
from mixsynth.sampler import SamplerSettings, run_chain
from mixsynth.schema import infer_spec

MIXSYNTH = str(Path(sys.executable).with_name("mixsynth"))


def small_table(n: int = 300, seed: int = 0) -> pd.DataFrame:
    """Two correlated numbers, a 3-level categorical, a rare binary and blanks."""
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((n, 3))
    frame = pd.DataFrame({"a": np.round(z[:, 0], 3), "b": np.round(z[:, 0] + z[:, 1], 3),
                          "g": np.where(z[:, 2] > 0.5, "x", np.where(z[:, 2] > -0.5, "y", "w")),
                          "rare": (z[:, 1] > 1.5).astype(int)})
    frame.loc[rng.random(n) < 0.1, "b"] = np.nan
    return frame


class Killed(Exception):
    pass


@pytest.mark.parametrize("until_converged, killed_at", [(False, 2500), (True, 1500)])
def test_a_resumed_chain_gives_the_draws_of_one_never_stopped(tmp_path, until_converged, killed_at):
    table = small_table()
    # until converged: rounds of 2,000 and 4,000 sweeps; the kill falls in the first
    settings = SamplerSettings(sweeps=4000, burn_in=2000, thin=4, until_converged=until_converged)
    model = CopulaSynthesizer(infer_spec(table), settings, seed=3).fit_marginals(table)
    cons = model.constraints(table)
    judged = judged_entries(model.columns_)

    def seed():   # a SeedSequence spawns new children at each call: one per run, as in a fit
        return np.random.SeedSequence(3).spawn(2)[1]
    whole = run_chain(cons, model.factors_, settings, seed(), judged=judged)

    checkpoint = Checkpoint(tmp_path / "chain-1.npz", every=0.0)   # a checkpoint after every sweep

    def kill_at(done):
        if done >= killed_at:
            raise Killed
    with pytest.raises(Killed):
        run_chain(cons, model.factors_, settings, seed(), kill_at, judged, checkpoint)
    assert checkpoint.path.is_file()
    calls = []
    resumed = run_chain(cons, model.factors_, settings, seed(), calls.append, judged, Checkpoint(checkpoint.path))
    assert calls[0] == killed_at   # it went on from the sweep it was killed in, not from 0
    assert whole.keys() == resumed.keys()
    for key in whole:
        assert np.array_equal(whole[key], resumed[key]), key
    assert int(resumed["sweeps"]) > killed_at

    other = SamplerSettings(sweeps=4000, burn_in=2000, thin=8, until_converged=until_converged)
    assert Checkpoint(checkpoint.path).read("another chain's key") is None
    fresh = run_chain(cons, model.factors_, other, seed(), judged=judged, checkpoint=Checkpoint(checkpoint.path))
    assert fresh["alpha"].shape[0] == other.kept   # another chain's checkpoint is not taken


def _position(path: Path) -> int:
    """The sweep a chain's checkpoint holds (0 while there is none)."""
    try:
        with np.load(path, allow_pickle=False) as f:
            return int(__import__("json").loads(str(f["meta"]))["position"]["sweep"])
    except (OSError, ValueError, KeyError):
        return 0


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_fit_resume_after_sigkill_gives_the_uninterrupted_file(tmp_path):
    """`mixsynth fit` killed (SIGKILL, no handler runs) at about half its sweeps, then
    `mixsynth fit --resume`: the model's draws and a synthetic file equal those of a fit
    never stopped, and the checkpoints are gone once the model is written."""
    small_table().to_csv(tmp_path / "real.csv", index=False)
    sweeps = 16_000
    common = ["fit", str(tmp_path / "real.csv"), "--sweeps", str(sweeps), "--chains", "2", "--seed", "5",
              "--no-progress", "--checkpoint-every", "0.2"]
    whole, stopped = tmp_path / "whole" / "model.npz", tmp_path / "stopped" / "model.npz"
    subprocess.run([MIXSYNTH, *common, "--model", str(whole)], check=True, capture_output=True)

    proc = subprocess.Popen([MIXSYNTH, *common, "--model", str(stopped)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    chains = [stopped.parent / "model.npz.chains" / f"chain-{c}.npz" for c in (0, 1)]
    end = time.monotonic() + 120
    while min(_position(c) for c in chains) < 0.4 * sweeps and time.monotonic() < end and proc.poll() is None:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    reached = [_position(c) for c in chains]
    assert min(reached) >= 0.4 * sweeps and max(reached) < sweeps and not stopped.exists(), reached

    done = subprocess.run([MIXSYNTH, *common, "--model", str(stopped), "--resume"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert not (stopped.parent / "model.npz.chains").exists()
    with np.load(whole) as a, np.load(stopped) as b:
        for key in (k for k in a.files if k.startswith("draws/")):
            assert np.array_equal(a[key], b[key]), key
    for model in (whole, stopped):
        subprocess.run([MIXSYNTH, "sample", str(model), "--out", str(model.with_suffix(".csv")), "--seed", "1"],
                       check=True, capture_output=True)
    assert _digest(whole.with_suffix(".csv")) == _digest(stopped.with_suffix(".csv"))
