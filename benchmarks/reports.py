"""The report's figures on the real files (issue 3): each file's declared regression, Cramer's V
drift, exact copies and attribute inference, and the time of `mixsynth report`.

    python benchmarks/reports.py           # full run -> results/reports.{json,md}
    python benchmarks/reports.py --quick   # short chains -> results/reports-quick.{json,md}
    python benchmarks/reports.py --only cps1988
    python benchmarks/reports.py --only ncbirths --fits 5   # also 4 more fits, one file each
    python benchmarks/reports.py --only cps1988 --copula-rows 10000   # -> results/reports-rows-10000.*

For each real file (NC births, CPS 1988, NHEFS; spec in examples/), exactly as a user runs the
command line: `mixsynth dataset`, `mixsynth split` (20% holdout, seed 1, never shown to the
synthesizer), `mixsynth fit` with the spec's settings (seed 1), then five synthetic files
(`mixsynth sample`, seeds 1-5, one posterior draw each), each reported on alone with
`mixsynth report` against the training rows and the holdout. Wall seconds of each command
are measured around the subprocess (Python start-up and file reading included). With
`--fits K`, K - 1 more fits (seeds 2..K) give one file each (synthesis seed 1), and the
standard deviation of mean CIO over the K fits is set beside its SD over one fit's files:
a sampler that has mixed makes them alike (issue 12). With `--copula-rows N` (or `all`) the
spec's `sampler.rows` is set to N (null: every row) in a copy of the spec: what fitting the
dependence on a subsample costs (issue 34).
"""
import json
import os
import re
import statistics
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from runner import (MIXSYNTH, REPO, keep_earlier, log, machine, parse_arguments, run_piece,  # noqa: E402
                    runs_footer, save_results, timed_run)

DATASETS = ("ncbirths", "cps1988", "nhefs")
SEEDS = (1, 2, 3, 4, 5)
QUICK_SWEEPS = 1_000
TARGETS = {"mean_cio": 0.7, "max_cramers_v_drop": 0.05, "exact_copies": 0, "report_seconds_cps1988": 60.0}


def run(*args: str) -> tuple[float, str]:
    """Run one `mixsynth` command; (wall seconds, stdout)."""
    seconds, done = timed_run([str(MIXSYNTH), *args])
    if done.returncode:
        raise SystemExit(f"mixsynth {args[0]} failed: {done.stderr.strip()}")
    return seconds, done.stdout


def bench_dataset(name: str, quick: bool, folder: Path, fits: int = 1, copula_rows: str | None = None) -> dict:
    spec = REPO / "examples" / f"{name}.yaml"
    if copula_rows is not None:
        raw = yaml.safe_load(spec.read_text())
        raw.setdefault("sampler", {})["rows"] = None if copula_rows == "all" else int(copula_rows)
        spec = folder / f"{name}-rows-{copula_rows}.yaml"
        spec.write_text(yaml.safe_dump(raw, sort_keys=False))
    real, train, hold = (folder / f"{name}{s}" for s in (".csv", "-train.csv", "-holdout.csv"))
    run("dataset", name, str(real))
    run("split", str(real), "--train", str(train), "--holdout", str(hold), "--seed", "1")

    def fit(seed: int) -> tuple[Path, float, re.Match | None]:
        model = folder / f"{name}-model-{seed}.npz"
        fit_args = ["fit", str(train), "--spec", str(spec), "--seed", str(seed), "--model", str(model), "--no-progress"]
        if quick:
            fit_args += ["--sweeps", str(QUICK_SWEEPS)]
        seconds, out = run(*fit_args)
        return model, seconds, re.search(r"max R-hat ([\d.]+), min bulk ESS (\d+)", out)

    def report_file(model: Path, tag: str, seed: int) -> dict:
        syn = folder / f"{name}-syn-{tag}.csv"
        sample_seconds, _ = run("sample", str(model), "--out", str(syn), "--seed", str(seed))
        out = folder / f"{name}-report-{tag}"
        report_seconds, _ = run("report", str(train), str(syn), "--spec", str(spec), "--holdout", str(hold),
                                "--out", str(out))
        report = json.loads((out / "report.json").read_text())
        decision = json.loads((out / "decision.json").read_text())
        pairs = report["associations"]["categorical_pairs"]
        drops = [abs(p["drop"]) for p in pairs if p["drop"] is not None]
        log(f"{name} file {tag}: mean CIO {report['headline']['mean_cio']:.3f}, "
            f"max V drop {report['headline']['max_cramers_v_drop']}, report {report_seconds:.1f} s")
        return {"seed": seed, "sample_seconds": sample_seconds, "report_seconds": report_seconds,
                "report_internal_seconds": report.get("seconds"),
                "load_average_1min": os.getloadavg()[0], "rows": report["rows"], "columns": len(report["columns"]),
                "headline": report["headline"], "max_abs_cramers_v_change": max(drops, default=None),
                "n_categorical_pairs": len(pairs), "decision": decision["decision"],
                "failed_rules": [r["measure"] for r in decision["rules"] if not r["passed"]]}

    model, fit_seconds, conv = fit(1)
    files = [report_file(model, str(seed), seed) for seed in SEEDS]
    cio = [f["headline"]["mean_cio"] for f in files]
    out = {"rows": files[0]["rows"], "columns": files[0]["columns"], "fit_seconds": fit_seconds,
           "rhat_max": conv and conv.group(1), "ess_bulk_min": conv and conv.group(2),
           "files": files,
           "summary": {"mean_cio_mean": statistics.mean(cio), "mean_cio_min": min(cio), "mean_cio_max": max(cio),
                       "mean_cio_sd_over_files": statistics.stdev(cio),
                       "files_cio_at_least_0_7": sum(c >= 0.7 for c in cio),
                       "max_cramers_v_drop": max(f["headline"]["max_cramers_v_drop"] or 0 for f in files),
                       "max_abs_cramers_v_change": max(f["max_abs_cramers_v_change"] or 0 for f in files),
                       "exact_copies": sum(f["headline"]["exact_copies"] for f in files),
                       "max_attribute_lift": max(f["headline"]["max_attribute_lift"] or 0 for f in files),
                       "report_seconds_max": max(f["report_seconds"] for f in files),
                       "report_seconds_median": statistics.median(f["report_seconds"] for f in files)}}
    if fits > 1:   # independent fits (seeds 1, 2, ...), the first file (synthesis seed 1) of each
        runs = [{"fit_seed": 1, "fit_seconds": fit_seconds, "rhat_max": out["rhat_max"],
                 "ess_bulk_min": out["ess_bulk_min"], "mean_cio": cio[0]}]
        for seed in range(2, fits + 1):
            model, seconds, conv = fit(seed)
            f = report_file(model, f"fit{seed}", 1)
            runs.append({"fit_seed": seed, "fit_seconds": seconds, "rhat_max": conv and conv.group(1),
                         "ess_bulk_min": conv and conv.group(2), "mean_cio": f["headline"]["mean_cio"]})
        out["fits"] = runs
        out["summary"]["mean_cio_sd_over_fits"] = statistics.stdev(r["mean_cio"] for r in runs)
    return out


def markdown(res: dict) -> str:
    m = res["machine"]
    L = [f"# Report figures on the real files{' (quick run)' if res['quick'] else ''}", "",
         f"Machine: {m.get('cpu_count')} cores, Python {m.get('python')}; commit {str(m.get('git_commit'))[:7]}. "
         f"Five synthetic files per dataset from one fit (seed 1), synthesis seeds 1-5; each file "
         f"reported on alone against the 80% training split, with the 20% holdout."
         + (f" The copula fitted on sampler.rows = {res['copula_rows']} rows." if res.get("copula_rows") else ""),
         "", *summary_table(res)]
    for name in DATASETS:
        d = res.get(name)
        if d and d.get("fits"):
            s = d["summary"]
            L += ["", f"{name}, {len(d['fits'])} independent fits (seeds 1-{len(d['fits'])}, synthesis seed 1 each; "
                  f"`--fits`): mean CIO " + ", ".join(f"{r['mean_cio']:.3f}" for r in d["fits"])
                  + f"; SD over fits {s['mean_cio_sd_over_fits']:.3f} against {s['mean_cio_sd_over_files']:.3f} "
                  f"over the five files of one fit; chains max R-hat "
                  + ", ".join(str(r["rhat_max"]) for r in d["fits"]) + ", min bulk ESS "
                  + ", ".join(str(r["ess_bulk_min"]) for r in d["fits"]) + "."]
    L += ["", "A utility figure counts only beside converged chains (max R-hat <= 1.05, min bulk ESS >= 100).",
          "", f"Targets: {json.dumps(TARGETS)}. 'max V drop' is the largest fall of Cramer's V "
          "(real - synthetic) over categorical pairs, the release rule's measure; 'max abs V change' "
          "counts rises too. Report seconds are the wall time of the whole `mixsynth report` command "
          "(anonymeter's attacks included; the first report of a dataset also warms caches); the machine "
          "may have been shared (`load_average_1min` per file in the JSON).", ""]
    L += runs_footer(res)
    return "\n".join(L)


def summary_table(res: dict) -> list[str]:
    """A row per file run: its fit, its chains' convergence and its five files' figures."""
    L = ["| dataset | rows (train) | fit s | chains: max R-hat / min bulk ESS | mean CIO per file (min / mean / max) | "
         "files >= 0.7 | max V drop | max abs V change | exact copies | max attribute lift | report s (median / max) |",
         "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name in DATASETS:
        d = res.get(name)
        if not d:
            continue
        s = d["summary"]
        L.append(f"| {name} | {d['rows']['real']:,} | {d['fit_seconds']:.0f} | "
                 f"{d.get('rhat_max', '?')} / {d.get('ess_bulk_min', '?')} | {s['mean_cio_min']:.3f} / {s['mean_cio_mean']:.3f} / {s['mean_cio_max']:.3f} | "
                 f"{s['files_cio_at_least_0_7']}/{len(d['files'])} | {s['max_cramers_v_drop']:.3f} | "
                 f"{s['max_abs_cramers_v_change']:.3f} | {s['exact_copies']} | {s['max_attribute_lift']:.3f} | "
                 f"{s.get('report_seconds_median', float('nan')):.1f} / {s['report_seconds_max']:.1f} |")
    return L


def options(ap) -> None:
    """reports.py's own option, beside the shared ones."""
    ap.add_argument("--fits", type=int, default=1, metavar="K",
                    help="K fits (seeds 1..K) of each file, one synthetic file each beyond the first's five")
    ap.add_argument("--copula-rows", default=None, metavar="N|all", dest="copula_rows",
                    help="fit the copula on N rows (sampler.rows; all: every row); results/reports-rows-N.*")


def main(argv=None) -> None:
    args, out, pieces, max_wait = parse_arguments(
        argv, __doc__.split("\n")[0], "reports", list(DATASETS), f"{QUICK_SWEEPS} sweeps per fit", options=options)
    if args.copula_rows is not None and args.out is None:
        out = out.with_name(f"{out.name}-rows-{args.copula_rows}")
    res = {"quick": args.quick, "targets": TARGETS, "machine": machine(), "runs": {},
           "copula_rows": args.copula_rows}
    if args.only:
        keep_earlier(res, out, DATASETS)
    with tempfile.TemporaryDirectory() as tmp:
        for name in pieces:
            run_piece(res, name, lambda: bench_dataset(name, args.quick, Path(tmp), args.fits, args.copula_rows), max_wait)
            save_results(res, out, markdown)
    log(f"wrote {out.with_suffix('.md')}")


if __name__ == "__main__":
    main()
