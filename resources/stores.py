"""The three folders the pipeline touches, as ConfigurableResources.

- ``ConfidentialStore`` (``MIXSYNTH_CONFIDENTIAL_DIR``, default ``out/confidential``): the
  real table, its training and holdout parts, model stages, chain draws and the candidate
  release of each wave, under ``<survey>/<wave>/``. Folders are created 0o700 and files
  0o600; nothing here is ever published as such.
- ``ReleaseStore`` (``MIXSYNTH_RELEASE_DIR``, default ``out/release``): only synthetic files,
  the reports and the synthesis record, under ``<survey>/<wave>/``, replaced as a whole by
  ``publish``.
- ``LandingArea`` (``MIXSYNTH_LANDING_DIR``, default ``out/landing``): where new confidential
  files arrive, one folder per survey (see ``mixsynth.landing`` for the rule).

Relative defaults are under the project folder (the repository root), whatever the
working directory.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
from pathlib import Path

import dagster as dg
import numpy as np
import pandas as pd

from mixsynth import CopulaSynthesizer, InputError, read_table, write_table

OWNER_DIR, OWNER_FILE = 0o700, 0o600


def project_folder() -> Path:
    """The repository root (the folder holding ``pipeline/``)."""
    return Path(__file__).resolve().parents[1]


def _root(value) -> Path:
    if isinstance(value, dg.EnvVar):   # a store made by from_env() outside a run (pipeline.run)
        value = value.get_value()
    path = Path(value).expanduser()
    return path if path.is_absolute() else project_folder() / path


class ConfidentialStore(dg.ConfigurableResource):
    """Owner-only folder of confidential files per survey and wave."""

    root: str = "out/confidential"

    @classmethod
    def from_env(cls) -> "ConfidentialStore":
        """The store at ``MIXSYNTH_CONFIDENTIAL_DIR`` when set, else the default folder."""
        var = "MIXSYNTH_CONFIDENTIAL_DIR"
        return cls(root=dg.EnvVar(var)) if os.environ.get(var) else cls()

    def folder(self, survey: str, wave: str, *sub: str) -> Path:
        """``root/survey/wave[/sub...]``, every level created owner-only."""
        root = _root(self.root)
        path = root.joinpath(survey, wave, *sub)
        _owner_only_dirs(root, path)
        return path

    def target(self, survey: str, wave: str, name: str) -> Path:
        """The path of file ``name`` (may start with subfolders) in the wave's folder, its
        folders created owner-only."""
        name = Path(name)
        return self.folder(survey, wave, *name.parent.parts) / name.name

    def owner_only(self, paths) -> list[Path]:
        """Set files written by others' writers (the report's, the record's) to 0o600."""
        paths = [Path(p) for p in paths]
        for path in paths:
            path.chmod(OWNER_FILE)
        return paths

    def write_table(self, frame: pd.DataFrame, survey: str, wave: str, name: str) -> Path:
        """Write ``frame`` to the wave's folder (atomically, then 0o600)."""
        path = self.target(survey, wave, name)
        write_table(frame, path)
        path.chmod(OWNER_FILE)
        return path

    def read_table(self, survey: str, wave: str, name: str) -> pd.DataFrame:
        return read_table(self._existing(survey, wave, name))

    def save_model(self, model: CopulaSynthesizer, survey: str, wave: str, name: str) -> Path:
        path = self.target(survey, wave, name)
        model.save(path)
        path.chmod(OWNER_FILE)
        return path

    def load_model(self, survey: str, wave: str, name: str) -> CopulaSynthesizer:
        return CopulaSynthesizer.load(self._existing(survey, wave, name))

    def save_arrays(self, arrays: dict[str, np.ndarray], survey: str, wave: str, name: str) -> Path:
        """Save named arrays (no pickle) atomically, owner-only."""
        path = self.target(survey, wave, name)
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, OWNER_FILE), "wb") as fh:
            np.savez(fh, **arrays)
        tmp.replace(path)
        return path

    def load_arrays(self, survey: str, wave: str, name: str) -> dict[str, np.ndarray]:
        with np.load(self._existing(survey, wave, name), allow_pickle=False) as f:
            return {k: f[k] for k in f.files}

    def write_json(self, data: dict, survey: str, wave: str, name: str) -> Path:
        path = self.target(survey, wave, name)
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, OWNER_FILE), "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1, allow_nan=False)
        tmp.replace(path)
        return path

    def read_json(self, survey: str, wave: str, name: str) -> dict:
        return json.loads(self._existing(survey, wave, name).read_text(encoding="utf-8"))

    def discard(self, survey: str, wave: str, *patterns: str) -> None:
        """Remove the wave's files (and folders) matching ``patterns``: a stage calls it for
        everything made from its output before it writes anew, so a stage that fails or is
        killed half-way leaves no file from an earlier input that a later step would read."""
        folder = _root(self.root) / survey / wave
        for pattern in patterns:
            for path in folder.glob(pattern):
                if path.is_dir():
                    shutil.rmtree(path)
                else:
                    path.unlink(missing_ok=True)

    def fingerprint(self, survey: str, wave: str) -> str | None:
        """The digest of the landing file the wave's raw table was last made from (None: none yet)."""
        path = _root(self.root) / survey / wave / "input.json"
        return json.loads(path.read_text(encoding="utf-8"))["fingerprint"] if path.is_file() else None

    def _existing(self, survey: str, wave: str, name: str) -> Path:
        path = _root(self.root) / survey / wave / name
        if not path.exists():
            raise InputError(f"'{name}' of {survey} wave {wave} is not in the confidential store; "
                             f"materialize the upstream assets of this wave first")
        return path


def _owner_only_dirs(root: Path, path: Path) -> None:
    """Create ``path`` and every folder from ``root`` down to it with mode 0o700."""
    for level in [root, *reversed([p for p in path.parents if root in p.parents])]:
        _owner_only_dir(level)
    _owner_only_dir(path)


def _owner_only_dir(level: Path) -> None:
    level.mkdir(mode=OWNER_DIR, parents=True, exist_ok=True)
    level.chmod(OWNER_DIR)


class ReleaseStore(dg.ConfigurableResource):
    """The published files per survey and wave; a wave's folder is replaced only whole."""

    root: str = "out/release"

    @classmethod
    def from_env(cls) -> "ReleaseStore":
        """The store at ``MIXSYNTH_RELEASE_DIR`` when set, else the default folder."""
        var = "MIXSYNTH_RELEASE_DIR"
        return cls(root=dg.EnvVar(var)) if os.environ.get(var) else cls()

    def folder(self, survey: str, wave: str) -> Path:
        """The wave's release folder (it exists once a release was published)."""
        return _root(self.root) / survey / wave

    def publish(self, survey: str, wave: str, files: dict[str, Path]) -> Path:
        """Copy ``files`` (release name -> source path; names may hold one subfolder, e.g.
        ``report/report.html``) into a fresh temporary folder beside the wave's folder, then
        swap it in by renaming: the previous release stays in place until the new one is
        complete, and is restored if the swap fails. Returns the release folder."""
        final = self.folder(survey, wave)
        final.parent.mkdir(parents=True, exist_ok=True)
        token = secrets.token_hex(6)
        staging = final.with_name(f".{wave}.{token}.new")
        retired = final.with_name(f".{wave}.{token}.old")
        try:
            for name, source in files.items():
                target = staging / name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, target)
            had_release = final.exists()
            if had_release:
                final.rename(retired)
            try:
                staging.rename(final)
            except OSError:
                if had_release:
                    retired.rename(final)
                raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(retired, ignore_errors=True)
        return final


class LandingArea(dg.ConfigurableResource):
    """The landing root: each survey's new confidential files arrive in a folder under it."""

    root: str = "out/landing"

    @classmethod
    def from_env(cls) -> "LandingArea":
        """The landing root at ``MIXSYNTH_LANDING_DIR`` when set, else the default folder."""
        var = "MIXSYNTH_LANDING_DIR"
        return cls(root=dg.EnvVar(var)) if os.environ.get(var) else cls()

    def path(self) -> Path:
        return _root(self.root)
