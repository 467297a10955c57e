"""A chain's state on disk, so that a stopped or killed chain resumes where it was.

A checkpoint holds everything the rest of the chain depends on: the ChainState (the latent
Z included, so a checkpoint is **confidential**: it belongs in the confidential store, next
to the model), the random generator's state, the kernels' stream states, the sweep reached
and the draws kept so far. A chain resumed from it gives the same draws, bit for bit, as
one never stopped. Each write goes to a temporary file that replaces the last checkpoint,
so a kill mid-write leaves the previous one. A checkpoint is only used by the chain it
was written for: its key digests the seed, the settings and the data's constraints.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np

from .tableio import atomic_path

CHECKPOINT_SECONDS = 120.0   # wall seconds between two checkpoints of a chain


@dataclass
class Checkpoint:
    """Where one chain's checkpoints go (``path``, an .npz) and how often (``every`` seconds)."""
    path: Path
    every: float = CHECKPOINT_SECONDS

    def __post_init__(self):
        self.path = Path(self.path)
        self._last = time.monotonic()
        self.resumed_at = 0   # the sweep a chain went on from (0: it started afresh)

    def due(self) -> bool:
        """Whether ``every`` seconds have passed since the last write (or the start)."""
        return time.monotonic() - self._last >= self.every

    def write(self, key: str, position: dict, state, rng: np.random.Generator, streams: dict, out: dict) -> None:
        """Replace the checkpoint atomically with the chain's state: ``position`` (sweep,
        round and draw reached: ints), ``state`` (a ChainState), ``streams`` (name -> uint64
        array) and ``out`` (the draws kept so far)."""
        arrays = {f"state/{f.name}": getattr(state, f.name) for f in fields(state)}
        arrays.update({f"streams/{k}": v for k, v in streams.items()})
        arrays.update({f"out/{k}": v for k, v in out.items()})
        meta = {"key": key, "position": position, "rng": rng.bit_generator.state}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(self.path) as tmp, open(os.open(tmp, os.O_WRONLY | os.O_CREAT, 0o600), "wb") as fh:
            np.savez(fh, meta=np.array(json.dumps(meta)), **arrays)   # owner-only: it holds Z
        self._last = time.monotonic()

    def read(self, key: str) -> dict | None:
        """The saved chain ({position, rng, state, streams, out}: dicts of arrays) when a
        checkpoint of this chain (same ``key``) exists, else None."""
        if not self.path.is_file():
            return None
        with np.load(self.path, allow_pickle=False) as f:
            meta = json.loads(str(f["meta"]))
            if meta["key"] != key:
                return None
            saved = {"position": meta["position"], "rng": meta["rng"], "state": {}, "streams": {}, "out": {}}
            for name in f.files:
                if "/" in name:
                    group, field = name.split("/", 1)
                    saved[group][field] = f[name]
        self.resumed_at = int(saved["position"]["sweep"])
        return saved


@dataclass(frozen=True)
class CheckpointFolder:
    """The checkpoints of a fit's chains: ``folder/chain-C.npz``, written every ``every`` seconds."""
    folder: Path
    every: float = CHECKPOINT_SECONDS

    def chain(self, c: int) -> Checkpoint:
        return Checkpoint(self.folder / f"chain-{c}.npz", self.every)

    def remove(self) -> None:
        """Remove the folder: the fit is complete (or is to start afresh)."""
        shutil.rmtree(self.folder, ignore_errors=True)


def chain_key(seed: np.random.SeedSequence, settings, k: int, cons) -> str:
    """A digest of what a chain is: its seed, the sampler settings, the number of factors and
    the constraints the data put on the latent columns."""
    h = hashlib.sha256()
    h.update(json.dumps([seed.entropy, list(seed.spawn_key), asdict(settings), k], default=str).encode())
    for array in cons.arrays:
        h.update(np.ascontiguousarray(array).tobytes())
    return h.hexdigest()
