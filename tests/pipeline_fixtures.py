"""A tiny survey for the pipeline tests: spec, landing file and stores in a temporary folder."""
import os
from pathlib import Path

import numpy as np
import yaml

from tables import gaussian_copula_table

RULES = [{"measure": "mean_cio", "min": 0.0},
         {"measure": "exact_copies", "max": 0,
          "limitation": "Some synthetic rows may equal real rows."}]


def small_table(seed: int = 5, n: int = 300):
    """300 rows x 5 columns: four copula columns and a response built from two of them."""
    frame = gaussian_copula_table(n, seed)
    rng = np.random.default_rng(seed)
    frame["score"] = np.round(10 + 2 * np.log(frame["income"]) + 0.5 * frame["visits"]
                              + rng.normal(0, 1, n), 3)
    return frame


def survey_spec(name: str = "tiny", rules=None) -> dict:
    """A survey spec with short MCMC (60 sweeps, 2 chains) and a small BART."""
    return {
        "survey": {"name": name, "schedule": "15 4 * * *", "seed": 3, "holdout": 0.2, "settle_seconds": 5},
        "columns": {"region": {"role": "quasi_identifier"}, "smoker": {"role": "sensitive"},
                    "score": {"kind": "continuous", "role": "response"}},
        "sampler": {"sweeps": 60, "burn_in": 20, "thin": 4, "chains": 2},
        "bart": {"trees": 10, "burn_in": 5, "draws": 20, "keep_every": 5, "warm_start": 2},
        "synthesis": {"m": 1},
        "report": {"regressions": [{"formula": "score ~ income + visits + C(region)"}]},
        "release": {"intended_uses": "tests", "rules": RULES if rules is None else rules},
    }


def write_survey(folder: Path, spec: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{spec['survey']['name']}.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    return folder


def land(path: Path, frame, age_seconds: float = 600) -> Path:
    """Write ``frame`` as a landing file last changed ``age_seconds`` ago."""
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)
    past = path.stat().st_mtime - age_seconds
    os.utime(path, (past, past))
    return path
