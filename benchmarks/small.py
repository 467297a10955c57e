"""Small files by default (issue 36): a 300-row, 14-column file converged in under 30 s.

    .venv/bin/python benchmarks/small.py     # -> results/small.{json,md}

``mixsynth synthesize REAL --out SYN`` with no spec, as a new user runs it, timed as a
whole command (reading, screen, chains, synthesis, writing; numba caches warm), on:
five 300-row samples of NC births (seeds 0-4, all 14 columns); the sample of seed 0 with
weight gain blank in all but 3 rows (the issue's sparse number column); and a 5,000-row
sample of CPS 1988 (seed 0) fitted with seeds 0-2, the size that must stay as it was. Each row gives the wall
seconds, the chains' max R-hat and min bulk ESS over the judged entries of C and the
sweeps each chain ran, as the command printed them. The issue's target: converged (R-hat
<= 1.05, bulk ESS >= 100) in under 30 s on the 300-row files, on 2 cores.
"""
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from runner import machine, parse_arguments, save_results, timed_synthesize  # noqa: E402

FITTED = re.compile(r"max R-hat ([\d.]+|n/a), min bulk ESS ([\d.]+|n/a)(?: \(chains of ([\d,]+(?: and [\d,]+)*) sweeps\))?")


def files() -> list[tuple[str, pd.DataFrame, int]]:
    """(name, table, fit seed) of each benchmarked run."""
    from mixsynth.datasets import load_cps1988, load_ncbirths

    births, cps = load_ncbirths(), load_cps1988()
    out = [(f"ncbirths-300-seed{s}", births.sample(300, random_state=s).reset_index(drop=True), 0) for s in range(5)]
    sparse = out[0][1].copy()
    sparse.loc[3:, "Gained"] = np.nan
    out.append(("ncbirths-300-seed0, Gained in 3 rows", sparse, 0))
    sample = cps.sample(5000, random_state=0).reset_index(drop=True)
    out += [("cps1988-5000-seed0", sample, fit_seed) for fit_seed in range(3)]
    return out


def run(name: str, real: pd.DataFrame, seed: int, max_wait: float) -> dict:
    """The default command on ``real`` with ``--seed seed``, timed once the machine is quiet
    (waiting up to ``max_wait`` s); its convergence line parsed."""
    done = timed_synthesize(real, "--seed", str(seed), max_wait=max_wait)
    syn = done["synthetic"]
    fitted = FITTED.search(done["stdout"])
    number = lambda s: None if s in (None, "n/a") else float(s)
    row = {"file": name, "fit_seed": seed, "rows": len(real), "columns": real.shape[1],
           "wall_seconds": round(done["wall_seconds"], 1),
           "rhat_max": number(fitted.group(1)), "ess_bulk_min": number(fitted.group(2)),
           "sweeps_per_chain": [int(x.replace(",", "")) for x in (fitted.group(3) or "").split(" and ") if x],
           "text_in_number_columns": sorted(c for c in real.columns if pd.api.types.is_numeric_dtype(real[c])
                                            and not pd.api.types.is_numeric_dtype(syn[c])),
           "other_cores_at_start": round(done["other_cores_at_start"], 2)}
    row["converged"] = bool(row["rhat_max"] is not None and row["rhat_max"] <= 1.05
                            and row["ess_bulk_min"] is not None and row["ess_bulk_min"] >= 100)
    print(row, flush=True)
    return row


def markdown(res: dict) -> str:
    m = res["machine"]
    lines = ["# Small files by default (issue 36)", "", __doc__.strip().split("\n\n", 1)[1], "",
             f"{m['date']} · {m['cpu_count']} CPUs · mixsynth @ {(m['git_commit'] or '')[:7]}"
             f"{' (uncommitted changes in mixsynth/)' if m['git_uncommitted_in_mixsynth'] else ''}", "",
             "| file | fit seed | rows x columns | wall s | max R-hat / min bulk ESS | sweeps per chain | converged | "
             "number columns written as text |", "|---|---|---|---|---|---|---|---|"]
    for r in res["runs"]:
        lines.append(f"| {r['file']} | {r['fit_seed']} | {r['rows']:,} x {r['columns']} | {r['wall_seconds']} | "
                     f"{r['rhat_max']} / {r['ess_bulk_min']:.0f} | "
                     f"{' and '.join(f'{s:,}' for s in r['sweeps_per_chain'])} | {'yes' if r['converged'] else 'no'} | "
                     f"{', '.join(r['text_in_number_columns']) or 'none'} |")
    small = [r for r in res["runs"] if r["rows"] == 300]
    lines += ["", f"300-row files: wall {min(r['wall_seconds'] for r in small)}-{max(r['wall_seconds'] for r in small)} s, "
              f"{sum(r['converged'] for r in small)} of {len(small)} converged, "
              f"{sum(r['converged'] and r['wall_seconds'] < 30 for r in small)} converged in under 30 s."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    _, out, _, max_wait = parse_arguments(argv, __doc__.split("\n")[0], "small")
    res = {"machine": machine(), "runs": [run(name, real, seed, max_wait) for name, real, seed in files()]}
    save_results(res, out, markdown, indent=1)


if __name__ == "__main__":
    main()
