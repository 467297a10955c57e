"""Surveys: spec files with a ``survey:`` section, each one survey whose files are its waves.

A folder of spec files configures the surveys (the pipeline reads ``MIXSYNTH_SURVEYS``,
default ``examples/``); every ``*.yaml`` file there with a ``survey:`` section is a survey,
files without one are ignored. The section (every key optional)::

    survey:
      name: ncbirths          # default: the spec file's name without .yaml
      schedule: "0 3 * * 1"   # cron (UTC) at which the latest wave is resynthesized
      landing: ncbirths       # landing folder, relative to the landing root; default: name
      files: "*"              # glob of the landing files that are waves
      settle_seconds: 60      # a landing file is complete once unchanged this long
      seed: 1                 # holdout split, MCMC, synthesis and report seed
      holdout: 0.2            # share of real rows kept out of synthesis for the report

The rest of the file is an ordinary spec (``mixsynth.schema``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .config import RunConfig
from .schema import load_spec
from .tableio import InputError

DEFAULTS = {"schedule": "0 3 * * 1", "files": "*", "settle_seconds": 60, "seed": 1, "holdout": 0.2}
_KEYS = ("name", "schedule", "landing", *DEFAULTS)
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Survey:
    """One configured survey: its spec (the raw mapping, ``survey:`` section included) and
    where its waves land."""

    name: str
    spec_path: Path
    spec: dict
    schedule: str
    landing: str
    files: str
    settle_seconds: float
    seed: int
    holdout: float

    def config(self, columns=()) -> RunConfig:
        """The run configuration of the spec (``columns``: the table's ColumnSpecs, for the
        responses a `role: response` declares)."""
        return RunConfig.from_spec(self.spec, columns)

    def landing_folder(self, root) -> Path:
        """The folder this survey's wave files land in, under the landing ``root``."""
        return Path(root) / self.landing


def survey_from_spec(path) -> Survey | None:
    """The survey configured by spec file ``path``, or None when it has no ``survey:`` section."""
    path = Path(path)
    raw = load_spec(path)
    section = raw.get("survey")
    if section is None:
        return None
    where = f"spec file '{path.name}', survey section"
    if not isinstance(section, dict):
        raise InputError(f"{where}: must be a mapping with keys such as name and schedule")
    unknown = [k for k in section if k not in _KEYS]
    if unknown:
        raise InputError(f"{where}: unknown key(s) {', '.join(map(str, unknown))}; allowed: {', '.join(_KEYS)}")
    cfg = {**DEFAULTS, "name": path.stem, **section}
    if not isinstance(cfg["name"], str) or not _NAME.match(cfg["name"]):
        raise InputError(f"{where}: name must start with a letter and hold only letters, digits "
                         f"and underscores (it names Dagster assets and jobs)")
    if not isinstance(cfg["schedule"], str) or len(cfg["schedule"].split()) != 5:
        raise InputError(f"{where}: schedule must be a cron string of five fields, e.g. \"0 3 * * 1\"")
    if not 0 < float(cfg["holdout"]) < 1:
        raise InputError(f"{where}: holdout must be between 0 and 1 (the share of rows held out)")
    if isinstance(cfg["seed"], bool) or not isinstance(cfg["seed"], int) or cfg["seed"] < 0:
        raise InputError(f"{where}: seed must be a non-negative integer")
    if float(cfg["settle_seconds"]) < 0:
        raise InputError(f"{where}: settle_seconds must be 0 or more")
    return Survey(cfg["name"], path, raw, cfg["schedule"], str(cfg.get("landing") or cfg["name"]),
                  str(cfg["files"]), float(cfg["settle_seconds"]), cfg["seed"], float(cfg["holdout"]))


def load_surveys(folder) -> list[Survey]:
    """Every survey configured in ``folder`` (its ``*.yaml`` files with a ``survey:`` section),
    sorted by name; two surveys with one name are an InputError."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"survey folder '{folder}' does not exist; set MIXSYNTH_SURVEYS to a folder of spec files")
    surveys = [s for p in sorted(folder.glob("*.yaml")) if (s := survey_from_spec(p)) is not None]
    names = [s.name for s in surveys]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InputError(f"survey name(s) {', '.join(twice)} configured twice in '{folder.name}'; rename one")
    return sorted(surveys, key=lambda s: s.name)
