"""What a chain checkpoint costs at census scale (issue 35).

    .venv/bin/python benchmarks/checkpoint.py     # ~1 min -> results/checkpoint.{json,md}

A ChainState of the whole KDD census-income file's layout (299,285 rows x 153 latent
columns, the full covariance structure: ``benchmarks/results/scale.md``), filled with normal
draws, and its 500 kept draws a chain: three ``Checkpoint.write`` calls into a temporary
folder on this machine's disk, and three ``Checkpoint.read`` calls, each timed; the file's
size. With that fit's seconds a sweep (scale.md: 250 sweeps a chain in 1,431 s of fit, the
screen and BART included, so an upper bound), the sweeps at most lost to a kill with a
checkpoint every CHECKPOINT_SECONDS, against those a chain killed at 90% of its run would
redo without one.
"""
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from core import machine  # noqa: E402

ROWS, LATENT, KEPT = 299_285, 153, 500
KDD_SWEEPS, KDD_FIT_SECONDS = 250, 1431.0


def main() -> None:
    from mixsynth.checkpoint import CHECKPOINT_SECONDS, Checkpoint
    from mixsynth.moves import ChainState

    rng = np.random.default_rng(0)
    p, n = LATENT, ROWS
    state = ChainState(Zt=rng.standard_normal((p, n)), etaT=np.zeros((0, n)), Lambda=rng.standard_normal((p, p)),
                       prec=np.ones(p), phi=np.zeros((p, 0)), delta=np.zeros(0), alpha=np.zeros(p))
    out = {"alpha": np.zeros((KEPT, p)), "Lambda": np.zeros((KEPT, p, p)), "sigma2": np.zeros((KEPT, p))}
    streams = {"latent": np.ones((p, 8), np.uint64), "noise": np.ones((16, 8), np.uint64)}
    gen = np.random.default_rng(1)
    writes, reads = [], []
    with tempfile.TemporaryDirectory(dir=HERE) as tmp:
        ck = Checkpoint(Path(tmp) / "chain-0.npz")
        for _ in range(3):
            t0 = time.perf_counter()
            ck.write("key", {"sweep": 1, "round": 0, "draw": 0}, state, gen, streams, out)
            writes.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            ck.read("key")
            reads.append(time.perf_counter() - t0)
        size = ck.path.stat().st_size
    per_sweep = KDD_FIT_SECONDS / KDD_SWEEPS
    res = {"machine": machine(), "rows": ROWS, "latent_columns": LATENT, "kept_draws": KEPT,
           "file_mb": round(size / 2**20, 1), "write_seconds": [round(x, 2) for x in writes],
           "read_seconds": [round(x, 2) for x in reads], "checkpoint_seconds": CHECKPOINT_SECONDS,
           "kdd_seconds_per_sweep": round(per_sweep, 2),
           "sweeps_lost_at_most": int(np.ceil((CHECKPOINT_SECONDS + np.median(writes)) / per_sweep)),
           "sweeps_redone_without_at_90pct": int(0.9 * KDD_SWEEPS)}
    m = res["machine"]
    md = ["# Chain checkpoints at census scale (issue 35)", "", __doc__.strip().split("\n\n", 1)[1], "",
          f"{m['date']} · {m['cpu_count']} CPUs · mixsynth @ {(m['git_commit'] or '')[:7]}", "",
          f"- checkpoint file: **{res['file_mb']} MB** (Z alone is {p * n * 8 / 2**20:.0f} MB)",
          f"- write: {', '.join(f'{x:.2f}' for x in writes)} s; read: {', '.join(f'{x:.2f}' for x in reads)} s",
          f"- one write every {CHECKPOINT_SECONDS:.0f} s of a chain: {np.median(writes) / CHECKPOINT_SECONDS:.1%} "
          f"of its time",
          f"- at {per_sweep:.1f} s a sweep, a kill loses at most {res['sweeps_lost_at_most']} sweeps; a chain "
          f"killed at 90% of 250 sweeps redoes {res['sweeps_redone_without_at_90pct']} without a checkpoint"]
    target = HERE / "results" / "checkpoint"
    target.with_suffix(".json").write_text(json.dumps(res, indent=1, default=float) + "\n")
    target.with_suffix(".md").write_text("\n".join(md) + "\n")
    print("\n".join(md[-4:]))


if __name__ == "__main__":
    main()
