"""A deployment in a temporary folder for the tests that start real Dagster processes: an
instance (DAGSTER_HOME with the shipped Postgres or SQLite settings), the stores, a
surveys folder, and helpers to wait on runs with deadlines."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
DONE = {dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED}


@dataclass
class Deployment:
    folder: Path
    env: dict = field(default_factory=dict)

    @classmethod
    def create(cls, folder: Path, postgres_env: dict | None = None, **extra) -> "Deployment":
        """Stores, landing root and surveys under ``folder``; Postgres storage when
        ``postgres_env`` (the DAGSTER_POSTGRES_* variables) is given, else SQLite."""
        home = folder / "dagster"
        home.mkdir(parents=True)
        source = ROOT / "docker" / "dagster.yaml" if postgres_env else ROOT / "dagster.yaml"
        shutil.copy(source, home / "dagster.yaml")
        env = {**os.environ, **(postgres_env or {}), "DAGSTER_HOME": str(home),
               "MIXSYNTH_SURVEYS": str(folder / "surveys"), "GX_ANALYTICS_ENABLED": "false",
               # the environment's tools first (dagster-celery starts `celery` by name)
               "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", **extra}
        for var, sub in (("MIXSYNTH_CONFIDENTIAL_DIR", "confidential"), ("MIXSYNTH_RELEASE_DIR", "release"),
                         ("MIXSYNTH_LANDING_DIR", "landing")):
            env[var] = str(folder / sub)
        (folder / "surveys").mkdir()
        return cls(folder, env)

    @property
    def landing(self) -> Path:
        return self.folder / "landing"

    @property
    def release(self) -> Path:
        return self.folder / "release"

    @property
    def confidential(self) -> Path:
        return self.folder / "confidential"

    def instance(self) -> dg.DagsterInstance:
        """The deployment's instance, opened from this process (its variables set meanwhile)."""
        saved = {k: os.environ.get(k) for k in self.env}
        os.environ.update(self.env)
        try:
            return dg.DagsterInstance.from_config(self.env["DAGSTER_HOME"])
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    def popen(self, args, log: Path, **kwargs) -> subprocess.Popen:
        """A process of the deployment in its own session (end it with services.stop_group)."""
        return subprocess.Popen(args, cwd=ROOT, env=self.env, stdout=log.open("wb"), stderr=subprocess.STDOUT,
                                start_new_session=True, **kwargs)

    def pipeline_run(self, survey: str, wave: str, log: Path, *extra: str) -> subprocess.Popen:
        """``python -m pipeline.run SURVEY WAVE`` (what make demo runs)."""
        return self.popen([sys.executable, "-m", "pipeline.run", survey, wave, *extra], log)


def wait_for(what: str, check, deadline: float, every: float = 0.5, alive=()):
    """Poll ``check()`` until it returns something truthy, failing past ``deadline``
    (time.monotonic()) or when a process in ``alive`` has exited."""
    while True:
        value = check()
        if value:
            return value
        for process, name in alive:
            assert process.poll() is None, f"{name} exited ({process.returncode}) while waiting for {what}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(every)


def step_events(instance, run_id: str, event_type: dg.DagsterEventType, step_key: str):
    return [e for e in instance.all_logs(run_id, of_type=event_type) if e.step_key == step_key]


def files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative path -> bytes)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
