"""Singling-out, linkability and inference risk with the anonymeter package, which lives in
its own environment (it needs numpy < 1.27): the tables go to a private temporary folder,
`anonymeter_attacks.py` runs there under that environment's Python, and only its JSON of
rates comes back.

The environment's Python is ``$MIXSYNTH_ANONYMETER_PYTHON``, else ``.venv-anonymeter/bin/python``
under the working folder (``make anonymeter-env`` creates it).
"""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

import pandas as pd

from ..schema import TableSpec

ENV = "MIXSYNTH_ANONYMETER_PYTHON"
SCRIPT = Path(__file__).with_name("anonymeter_attacks.py")
MEANING = ("anonymeter (Giomi et al. 2023): an attacker uses the synthetic file to single out, "
           "link or infer real training records; risk = (attack success - control success on "
           "held-out real rows) / (1 - control success), with a 95% interval; 0 means the "
           "synthetic file tells the attacker no more about training records than about people "
           "outside it. Its random baseline is not seeded, so reruns differ within the interval.")


def anonymeter_python() -> Path | None:
    """The Python of the anonymeter environment, or None when there is none."""
    given = os.environ.get(ENV)
    path = Path(given) if given else Path.cwd() / ".venv-anonymeter" / "bin" / "python"
    return path if path.exists() else None


def anonymeter_risks(real: pd.DataFrame, syn: pd.DataFrame, holdout: pd.DataFrame, spec: TableSpec,
                     python: Path, n_attacks: int = 500, seed: int = 0) -> dict:
    """Run the three attacks on the spec's columns; returns the script's JSON (risks with
    intervals, success rates; module docstring of anonymeter_attacks) plus ``meaning``.
    Raises RuntimeError naming only the exit code when the attacks fail."""
    names = spec.names
    sensitive = {c.name: c.kind in ("continuous", "count", "date") for c in spec.by_role("sensitive")}
    with tempfile.TemporaryDirectory(prefix="mixsynth-anonymeter-") as tmp:  # created owner-only
        folder = Path(tmp)
        paths = {}
        for key, frame in (("ori", real), ("syn", syn), ("control", holdout)):
            paths[key] = str(folder / f"{key}.csv")
            frame[names].to_csv(paths[key], index=False)
        config = folder / "config.json"
        config.write_text(json.dumps({**paths, "quasi": [c.name for c in spec.by_role("quasi_identifier")],
                                      "sensitive": sensitive, "n_attacks": int(n_attacks), "seed": int(seed)}))
        done = subprocess.run([str(python), "-P", str(SCRIPT), str(config)], capture_output=True, text=True,
                              env={**os.environ, "OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"})
    if done.returncode:  # stderr may quote data: never shown
        raise RuntimeError(f"anonymeter attacks failed (exit code {done.returncode})")
    return {**json.loads(done.stdout), "meaning": MEANING}
