"""What a chain checkpoint costs at census scale (issue 35).

    .venv/bin/python benchmarks/checkpoint.py     # -> results/checkpoint.{json,md}

A ChainState of the layout of the whole KDD census-income fit that ``scale.py`` measured (its
rows and latent columns, the full covariance structure, from ``results/scale.json``), filled
with normal draws, and KEPT kept draws a chain: three ``Checkpoint.write`` calls into a
temporary folder on this machine's disk, and three ``Checkpoint.read`` calls, each timed; the
file's size. With that fit's seconds a sweep (its fit's wall seconds over the sweeps a chain
of ``examples/kdd-census.yaml`` runs, the screen and BART included, so an upper bound), the
sweeps at most lost to a kill with a checkpoint every CHECKPOINT_SECONDS, against those a
chain killed at 90% of its run would redo without one.
"""
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from runner import HERE, REPO, RESULTS, machine, parse_arguments, save_results  # noqa: E402

KEPT = 500   # kept draws a chain: the default budget's


def kdd_fit() -> dict:
    """Rows, latent columns, sweeps a chain and fit seconds of scale.py's whole-file fit."""
    whole = json.loads((RESULTS / "scale.json").read_text())["rows_299285"]
    sampler = yaml.safe_load((REPO / "examples" / "kdd-census.yaml").read_text())["sampler"]
    return {"rows": whole["rows"], "latent_columns": whole["ours"]["latent_columns"],
            "sweeps": sampler["sweeps"], "fit_seconds": whole["ours"]["fit"]["wall_seconds"]}


def markdown(res: dict) -> str:
    m, p, n = res["machine"], res["latent_columns"], res["rows"]
    writes, reads = res["write_seconds"], res["read_seconds"]
    return "\n".join([
        "# Chain checkpoints at census scale (issue 35)", "", __doc__.strip().split("\n\n", 1)[1], "",
        f"{m['date']} · {m['cpu_count']} CPUs · mixsynth @ {(m['git_commit'] or '')[:7]}", "",
        f"- layout: {n:,} rows x {p} latent columns, {res['kept_draws']} kept draws",
        f"- checkpoint file: **{res['file_mb']} MB** (Z alone is {p * n * 8 / 2**20:.0f} MB)",
        f"- write: {', '.join(f'{x:.2f}' for x in writes)} s; read: {', '.join(f'{x:.2f}' for x in reads)} s",
        f"- one write every {res['checkpoint_seconds']:.0f} s of a chain: "
        f"{np.median(writes) / res['checkpoint_seconds']:.1%} of its time",
        f"- at {res['kdd_seconds_per_sweep']:.1f} s a sweep, a kill loses at most {res['sweeps_lost_at_most']} "
        f"sweeps; a chain killed at 90% of {res['kdd_sweeps']} sweeps redoes {res['sweeps_redone_without_at_90pct']} "
        "without a checkpoint"]) + "\n"


def main(argv=None) -> None:
    _, out, _, _ = parse_arguments(argv, __doc__.split("\n")[0], "checkpoint", waits=False)
    from mixsynth.checkpoint import CHECKPOINT_SECONDS, Checkpoint
    from mixsynth.moves import ChainState

    kdd = kdd_fit()
    rng = np.random.default_rng(0)
    p, n = kdd["latent_columns"], kdd["rows"]
    state = ChainState(Zt=rng.standard_normal((p, n)), etaT=np.zeros((0, n)), Lambda=rng.standard_normal((p, p)),
                       prec=np.ones(p), phi=np.zeros((p, 0)), delta=np.zeros(0), alpha=np.zeros(p))
    kept = {"alpha": np.zeros((KEPT, p)), "Lambda": np.zeros((KEPT, p, p)), "sigma2": np.zeros((KEPT, p))}
    streams = {"latent": np.ones((p, 8), np.uint64), "noise": np.ones((16, 8), np.uint64)}
    gen = np.random.default_rng(1)
    writes, reads = [], []
    with tempfile.TemporaryDirectory(dir=HERE) as tmp:
        ck = Checkpoint(Path(tmp) / "chain-0.npz")
        for _ in range(3):
            t0 = time.perf_counter()
            ck.write("key", {"sweep": 1, "round": 0, "draw": 0}, state, gen, streams, kept)
            writes.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            ck.read("key")
            reads.append(time.perf_counter() - t0)
        size = ck.path.stat().st_size
    per_sweep = kdd["fit_seconds"] / kdd["sweeps"]
    res = {"machine": machine(), "rows": n, "latent_columns": p, "kept_draws": KEPT,
           "file_mb": round(size / 2**20, 1), "write_seconds": [round(x, 2) for x in writes],
           "read_seconds": [round(x, 2) for x in reads], "checkpoint_seconds": CHECKPOINT_SECONDS,
           "kdd_sweeps": kdd["sweeps"], "kdd_fit_seconds": kdd["fit_seconds"],
           "kdd_seconds_per_sweep": round(per_sweep, 2),
           "sweeps_lost_at_most": int(np.ceil((CHECKPOINT_SECONDS + np.median(writes)) / per_sweep)),
           "sweeps_redone_without_at_90pct": int(0.9 * kdd["sweeps"])}
    save_results(res, out, markdown, indent=1)
    print(markdown(res), end="")


if __name__ == "__main__":
    main()
