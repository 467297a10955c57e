"""Side-by-side benchmark of mixsynth against the synthesizers a microdata unit would pick instead.

    bash benchmarks/peers/setup.sh          # once: the peer environment .venv-peers
    bash benchmarks/peers/setup-arf.sh      # once: .venv-arf (arf)
    bash benchmarks/peers/setup-argn.sh     # once: .venv-argn (tabularargn)
    nice -n 19 .venv/bin/python benchmarks/peers.py            # -> results/peers.{json,md,*.png}
    nice -n 19 .venv/bin/python benchmarks/peers.py --quick    # smoke run -> results/peers-quick.*
    .venv/bin/python benchmarks/peers.py --help                # the options: re-run files or methods,
                                                               # resume, several files, rescore, render

For each real file (ncbirths, cps1988, nhefs) and the paper-layout simulator (a stand-in for the
paper's confidential table): write it, split it 80/20 (seed 0; the 20% is the holdout no
synthesizer sees), run every method on the training split, time it and sample the resident
memory of its process tree, then score each synthetic file with the product's own
report (``build_report`` against the training split, with the holdout). Ours runs through
``mixsynth synthesize`` with the example spec (``ours_auto``: the spec without its ``bart``
section and its ``role: response`` declarations, as a user who declares no response runs it);
the peers through ``benchmarks/peers/run_peer.py`` with the interpreter of the method's own
environment (``.venv-peers``, ``.venv-arf`` or ``.venv-argn``; CSV in, CSV out: nothing of
theirs is imported here). Every method gets the columns the spec models (its excluded columns
dropped) and the same number of rows.
The page also reproduces the paper's Figure 4 (utility over the random CART visit orders) and
Section 6.4 (outlier attribute disclosure).
"""
import copy
import json
import math
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from runner import (MIXSYNTH, REPO, RUN_PEER, log, machine, now, parse_arguments,  # noqa: E402
                    peer_python, run_measured, runs_footer, wait_until_quiet)

WORK = REPO / "out" / "peers"
DATASETS = ["ncbirths", "nhefs", "cps1988", "paper-layout"]   # the slowest last
OURS = ["ours_rpl", "ours_rl", "ours_auto"]
PEERS = ["sdv_gaussian_copula", "sdv_ctgan", "cart_port", "cart", "independent", "arf", "tabularargn"]
# each peer environment: its setup script and the packages whose versions the results record
ENVIRONMENTS = {
    ".venv-peers": ("benchmarks/peers/setup.sh", ("sdv==", "ctgan==", "copulas==", "rdt==", "python-synthpop==",
                                                  "torch==", "pandas==", "numpy==", "scikit-learn==")),
    ".venv-arf": ("benchmarks/peers/setup-arf.sh", ("arfpy==", "numpy==", "pandas==", "scikit-learn==", "scipy==")),
    ".venv-argn": ("benchmarks/peers/setup-argn.sh", ("mostlyai-engine==", "torch==", "transformers==", "numpy==",
                                                      "pandas==", "scikit-learn==")),
}
ENVIRONMENT_OF = {"arf": ".venv-arf", "tabularargn": ".venv-argn"}   # the other peers: .venv-peers


def environment(method: str) -> str | None:
    """The peer environment a method runs in (None: ours, in .venv)."""
    if method in OURS:
        return None
    return ENVIRONMENT_OF.get(method, ".venv-peers")


FULL = dict(split_seed=0, holdout_fraction=0.2, synth_seed=1, report_seed=0,
            cart_orders=20, cart_order_seed=1000,
            ctgan_max_steps=900, ctgan_batch=500, ctgan_max_epochs=300,
            sweeps=None,                                   # None: the example spec's sampler
            argn_max_minutes=5, argn_threads=1, files=1)
# FULL has no "bart" key: the example specs' BART settings (adding one would change the config
# that --only and --resume check the kept results against)
QUICK = dict(FULL, cart_orders=3, ctgan_max_steps=30, sweeps=dict(sweeps=400, burn_in=200, thin=2),
             bart=dict(trees=50, burn_in=20, draws=50), argn_max_minutes=1)
# settings added after results were first written: a results file without them was made
# before the methods that use them existed (``files``: with one file per method)
ADDED_SETTINGS = {"argn_max_minutes": None, "argn_threads": None, "files": 1}


def same_settings(old: dict, cfg: dict) -> bool:
    """Whether results written with config ``old`` can be kept beside a run with ``cfg``."""
    old = {**{k: v for k, v in ADDED_SETTINGS.items() if v is not None}, **old}
    return (set(cfg) - set(old) <= set(ADDED_SETTINGS) and set(old) <= set(cfg)
            and all(old[k] == v for k, v in cfg.items() if k in old))

COLUMNS = [  # (key in a method's scores, table heading, digits)
    ("mean_cio", "mean CIO", 3), ("mean_std_sq_diff", "mean std. sq. diff.", 2),
    ("max_cramers_v_drop", "max V drop", 3),
    ("exact_copies", "exact copies", 0), ("max_attribute_lift", "attr. lift", 3),
    ("pmse_ratio", "pMSE ratio", 2), ("propensity_auc", "GBM propensity AUC", 3), ("dcr_share_below_holdout_q05", "DCR share < q05", 3),
    ("min_tstr_difference", "TSTR diff.", 3), ("max_outlier_r2", "outlier R²", 3),
    ("anonymeter_singling_out", "anon. singling out", 3), ("anonymeter_linkability", "anon. linkability", 3),
    ("anonymeter_max_inference", "anon. inference", 3),
    ("max_tvd", "max TVD", 3), ("max_ks", "max KS", 3),
    ("wall_seconds", "wall s", 1), ("peak_mib", "peak MiB", 0), ("other_cores", "other load", 2),
]
BETTER = {"mean_cio": max, "max_cramers_v_drop": min, "max_attribute_lift": min}
FIGURE4 = [  # (key, name, digits, better): the paper's Figure 4 measures of the declared regression
    ("mean_cio", "mean interval overlap (CIO)", 3, max),
    ("mean_std_sq_diff", "mean standardized squared difference", 2, min),
]
MARKED = [("ours_rpl", "C3", "-"), ("ours_rl", "C1", "--"), ("cart", "k", ":")]  # (method, colour, line)


def ctgan_epochs(n_rows: int, cfg: dict) -> int:
    """SDV's 300 epochs, capped so that CTGAN takes at most ``ctgan_max_steps`` optimizer steps
    (what 300 epochs are on the ~1,300-row files); the cap binds on CPS (CPU time)."""
    batches = math.ceil(n_rows / cfg["ctgan_batch"])
    return max(1, min(cfg["ctgan_max_epochs"], cfg["ctgan_max_steps"] // batches))


def prepare(dataset: str, cfg: dict):
    """Real file, 80/20 split, spec; the training split and holdout with the modelled columns."""
    from mixsynth import infer_spec, load_spec, read_table

    folder = WORK / dataset
    folder.mkdir(parents=True, exist_ok=True)
    real, train, hold = (folder / f"{k}.csv" for k in ("real", "train-full", "holdout-full"))
    subprocess.run([str(MIXSYNTH), "dataset", dataset, str(real)], check=True, capture_output=True)
    subprocess.run([str(MIXSYNTH), "split", str(real), "--train", str(train), "--holdout", str(hold),
                    "--fraction", str(cfg["holdout_fraction"]), "--seed", str(cfg["split_seed"])],
                   check=True, capture_output=True)
    spec_path = REPO / "examples" / f"{dataset}.yaml"
    spec = infer_spec(read_table(train), load_spec(spec_path))
    frames = {}
    for name, path in (("train", train), ("holdout", hold)):
        frames[name] = read_table(path)[spec.names]
        frames[name].to_csv(folder / f"{name}.csv", index=False)
    categorical = [c.name for c in spec.columns if c.kind in ("categorical", "binary", "ordinal")]
    return folder, spec, spec_path, frames, categorical


def ours_spec(spec_path: Path, folder: Path, cfg: dict) -> Path:
    """The spec our runs use: the example spec, or in a quick run a copy in ``folder`` with
    shortened BART settings (the sampler's are shortened by command-line flags)."""
    if "bart" not in cfg:
        return spec_path
    import yaml
    from mixsynth import load_spec

    quick = folder / "spec-quick.yaml"
    quick.write_text(yaml.safe_dump({**load_spec(spec_path), "bart": cfg["bart"]}, sort_keys=False))
    return quick


def auto_spec(spec_path: Path, folder: Path) -> Path:
    """ours_auto's spec, ``folder/spec-auto.yaml``: the example spec without its ``bart`` section
    and without its ``role: response`` declarations (those columns keep their other settings and
    get the default role), as a new user who declares no response runs it."""
    import yaml
    from mixsynth import load_spec

    raw = load_spec(spec_path)
    raw.pop("bart", None)
    if raw.get("columns"):
        raw["columns"] = {name: ({k: v for k, v in decl.items() if k != "role"}
                                 if isinstance(decl, dict) and decl.get("role") == "response" else decl)
                          for name, decl in raw["columns"].items()}
    path = folder / "spec-auto.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


def output_files(folder: Path, name: str, files: int) -> list[Path]:
    """The synthetic files of one method: ``name.csv``, or ``name_1.csv`` ... ``name_N.csv``
    (the names ``mixsynth synthesize --m N`` writes)."""
    if files == 1:
        return [folder / f"{name}.csv"]
    return [folder / f"{name}_{i}.csv" for i in range(1, files + 1)]


def commands(dataset, folder, spec_path, frames, categorical, cfg) -> dict[str, dict]:
    """Method name -> {"runs": the commands to run, "files": the synthetic files they write}.

    With ``cfg["files"]`` N > 1, ours makes its N files in one fit (``--m N``: N posterior
    draws, as the product makes several files), and every peer runs N times, with synthesis
    seeds ``synth_seed`` ... ``synth_seed + N - 1`` (fit and sample are one step in the
    runner). The random CART orders keep one file each: their spread is the orders'."""
    files = cfg.get("files", 1)
    spec_path_quick = ours_spec(spec_path, folder, cfg)
    out = {}
    for name, method, spec in (("ours_rpl", "rpl", spec_path_quick), ("ours_rl", "rl", spec_path_quick),
                               ("ours_auto", "rpl", auto_spec(spec_path, folder))):
        cmd = [str(MIXSYNTH), "synthesize", str(folder / "train-full.csv"), "--spec", str(spec),
               "--seed", str(cfg["synth_seed"]), "--method", method, "--no-progress",
               "--out", str(folder / f"{name}.csv")]
        for k, v in (cfg["sweeps"] or {}).items():
            cmd += [f"--{k.replace('_', '-')}", str(v)]
        if files > 1:
            cmd += ["--m", str(files)]
        out[name] = {"runs": [cmd], "files": output_files(folder, name, files)}

    def peer(method, path, seed, *extra):
        return [str(peer_python(environment(method))), str(RUN_PEER), method, str(folder / "train.csv"),
                str(path), "--seed", str(seed), "--categorical", ",".join(categorical), *extra]

    for method in PEERS:
        extra = []
        if method == "sdv_ctgan":
            extra = ["--epochs", str(ctgan_epochs(len(frames["train"]), cfg))]
        elif method == "tabularargn":
            extra = ["--minutes", str(cfg["argn_max_minutes"]), "--threads", str(cfg["argn_threads"])]
        paths = output_files(folder, method, files)
        out[method] = {"runs": [peer(method, path, cfg["synth_seed"] + i, *extra) for i, path in enumerate(paths)],
                       "files": paths}
    rng = np.random.default_rng(cfg["cart_order_seed"])
    names = list(frames["train"].columns)
    for i in range(1, cfg["cart_orders"] + 1):
        order = [names[j] for j in rng.permutation(len(names))]
        path = folder / f"cart_order_{i:02d}.csv"
        out[f"cart_order_{i:02d}"] = {"runs": [peer("cart", path, cfg["synth_seed"], "--visit-order", ",".join(order))],
                                      "files": [path]}
    return out


def score(path: Path, spec, frames, cfg) -> dict:
    """The product's report on one synthetic file: its headline plus the marginal summary;
    the whole report is kept beside the file (out/, not committed)."""
    from mixsynth import read_table
    from mixsynth.report.build import build_report

    syn = read_table(path)[spec.names]
    report = build_report(frames["train"], [syn], spec, holdout=frames["holdout"], seed=cfg["report_seed"])
    path.with_suffix(".report.json").write_text(json.dumps(report, indent=1) + "\n")
    tvd = [m["tvd"] for m in report["marginals"] if m.get("tvd") is not None]
    ks = [m["ks"] for m in report["marginals"] if m.get("ks") is not None]
    return {**report["headline"], "max_tvd": max(tvd, default=None), "max_ks": max(ks, default=None),
            "rows": len(syn)}


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def combine(per_file: list[dict], runs: list[dict], commands: list[str]) -> dict:
    """One method's entry. One file: its scores, timing and command, as before ``--files``.
    Several: each score's mean over the files (under the score's own key, so the tables,
    verdicts and plots read it as they read one file's), its SD over the files (``sd``), every
    file's scores (``per_file``); wall seconds summed over the runs, peak memory the largest,
    other load the mean."""
    timing = {"wall_seconds": sum(r["wall_seconds"] for r in runs), "peak_mib": max(r["peak_mib"] for r in runs),
              "other_cores": float(np.mean([r["other_cores"] for r in runs]))}
    if len(per_file) == 1:
        return {**per_file[0], **timing, "command": commands[0]}
    means, sds = {}, {}
    for key in dict.fromkeys(k for f in per_file for k in f):
        vals = [f.get(key) for f in per_file]
        nums = [v for v in vals if _number(v)]
        if len(nums) < len(vals) or not nums:          # a score some file lacks: no mean
            means[key] = None if not nums else float(np.mean(nums))
            sds[key] = None
            continue
        means[key] = float(np.mean(nums))
        sds[key] = float(np.std(nums, ddof=1))
    return {**means, **timing, "files": len(per_file), "sd": sds, "per_file": per_file,
            "wall_seconds_per_run": [r["wall_seconds"] for r in runs], "command": commands[0],
            "commands": commands}


def rescore(res: dict, datasets: list[str], methods: list[str] | None) -> None:
    """Score the synthetic files a run kept again with the report as it is now (after a fix to
    the report), keeping each method's timings and commands; ``methods``: only these."""
    cfg = res["config"]
    for dataset in datasets:
        folder, spec, _, frames, _ = prepare(dataset, cfg)
        res["datasets"][dataset]["holdout_copies"] = holdout_copies(frames)
        order_spec = copy.deepcopy(spec)
        order_spec.extra["report"] = {k: v for k, v in (spec.extra.get("report") or {}).items() if k != "anonymeter"}
        for method, old in res["datasets"][dataset]["methods"].items():
            if methods is not None and method not in methods:
                continue
            files = old.get("files", 1) if isinstance(old.get("files"), int) else 1
            log(f"{dataset}: rescoring {method} ({files} file(s))")
            per_file = [score(path, order_spec if method.startswith("cart_order_") else spec, frames, cfg)
                        for path in output_files(folder, method, files)]
            walls = old.get("wall_seconds_per_run") or [old["wall_seconds"]]
            runs = [{"wall_seconds": w, "peak_mib": old["peak_mib"], "other_cores": old["other_cores"]} for w in walls]
            res["datasets"][dataset]["methods"][method] = combine(per_file, runs, old.get("commands") or [old["command"]])


def _relative(cmd: list[str]) -> str:
    return " ".join(Path(c).relative_to(REPO).as_posix() if c.startswith(str(REPO)) else c for c in cmd)


def run_dataset(dataset: str, cfg: dict, res: dict, save, methods: list[str] | None = None) -> None:
    """Run and score every method on one file; ``methods``: only these (re-run if kept),
    else the methods the entry lacks (all of them in a fresh run)."""
    folder, spec, spec_path, frames, categorical = prepare(dataset, cfg)
    entry = res["datasets"].setdefault(dataset, {"methods": {}})
    shape = dict(rows_train=len(frames["train"]), rows_holdout=len(frames["holdout"]),
                 columns=len(spec.names), categorical=categorical)
    changed = {k: (entry[k], v) for k, v in shape.items() if entry["methods"] and k in entry and entry[k] != v}
    if changed:
        sys.exit(f"{dataset}: the kept results were made on another table than the example spec gives now "
                 f"({', '.join(f'{k} {a} -> {b}' for k, (a, b) in changed.items())}); re-run the whole file "
                 f"with --only {dataset} (or write elsewhere with --out)")
    entry.update(shape, ctgan_epochs=ctgan_epochs(len(frames["train"]), cfg), holdout_copies=holdout_copies(frames))
    # the random CART orders show the spread of utility over visit orders (the paper's Figure 4):
    # they are scored without the anonymeter attacks, which take most of a report's time
    order_spec = copy.deepcopy(spec)
    order_spec.extra["report"] = {k: v for k, v in (spec.extra.get("report") or {}).items() if k != "anonymeter"}
    for method, job in commands(dataset, folder, spec_path, frames, categorical, cfg).items():
        if methods is not None:
            if method not in methods and not (method.startswith("cart_order_") and "cart_orders" in methods):
                continue
        elif method in entry["methods"]:                     # --resume: done in an earlier run
            continue
        log(f"{dataset}: {method}" + (f" ({len(job['files'])} files)" if len(job["files"]) > 1 else ""))
        logs = [folder / f"{method}.log"] if len(job["runs"]) == 1 else \
            [folder / f"{method}_{i}.log" for i in range(1, len(job["runs"]) + 1)]
        runs = [run_measured(cmd, path) for cmd, path in zip(job["runs"], logs)]
        spec_used = order_spec if method.startswith("cart_order_") else spec
        per_file = [score(path, spec_used, frames, cfg) for path in job["files"]]
        entry["methods"][method] = combine(per_file, runs, [_relative(cmd) for cmd in job["runs"]])
        scores = entry["methods"][method]
        log(f"   {scores['wall_seconds']:.0f} s, {scores['peak_mib']:.0f} MiB, CIO {scores['mean_cio']}, "
            f"V drop {scores['max_cramers_v_drop']}, copies {scores['exact_copies']}")
        save()


# -- tables, verdicts, plots -------------------------------------------------------------------

def _fmt(x, nd):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "n/a"
    return f"{x:,.{nd}f}"


def _cell(method: dict, key: str, nd: int) -> str:
    """A table cell: the score, or with several files its mean ± its SD over the files."""
    sd = (method.get("sd") or {}).get(key)
    if sd is None or method.get(key) is None:
        return _fmt(method.get(key), nd)
    return f"{_fmt(method[key], nd)} ± {_fmt(sd, nd)}"


def _single_runs(methods: dict) -> list[str]:
    """Methods other than the random CART orders: ours first, then the peers in PEERS order."""
    rank = [*OURS, *PEERS]
    return sorted((k for k in methods if not k.startswith("cart_order_")),
                  key=lambda k: rank.index(k) if k in rank else len(rank))


def _orders(methods: dict) -> list[dict]:
    return [v for k, v in methods.items() if k.startswith("cart_order_")]


def table(entry: dict) -> list[str]:
    methods = entry["methods"]
    L = ["| method | " + " | ".join(h for _, h, _ in COLUMNS) + " |", "|---" * (len(COLUMNS) + 1) + "|"]
    for name in _single_runs(methods):
        L.append(f"| {name} | " + " | ".join(_cell(methods[name], k, nd) for k, _, nd in COLUMNS) + " |")
    orders = _orders(methods)
    if orders:
        def spread(k, nd):
            vals = [o[k] for o in orders if o.get(k) is not None]
            if not vals:
                return "n/a"
            return f"{_fmt(float(np.median(vals)), nd)} [{_fmt(min(vals), nd)}, {_fmt(max(vals), nd)}]"
        L.append(f"| cart, {len(orders)} random orders: median [min, max] | "
                 + " | ".join(spread(k, nd) for k, _, nd in COLUMNS) + " |")
    return L


def verdicts(entry: dict) -> list[dict]:
    """The issue's figures on one file: ours (RPL) against the best peer run with its defaults,
    and against the best of the random CART orders."""
    methods = entry["methods"]
    ours = methods.get("ours_rpl")
    if not ours:
        return []
    peers = {k: v for k, v in methods.items() if k in PEERS}
    orders = _orders(methods)
    out = []
    for key, best in BETTER.items():
        if key == "max_attribute_lift":
            ref_name, ref = "sdv_gaussian_copula", (peers.get("sdv_gaussian_copula") or {}).get(key)
        else:
            vals = {k: v[key] for k, v in peers.items() if v.get(key) is not None}
            ref_name = best(vals, key=vals.get) if vals else None
            ref = vals.get(ref_name)
        order_vals = [o[key] for o in orders if o.get(key) is not None]
        safe = {k: v[key] for k, v in peers.items() if v.get(key) is not None and v.get("exact_copies") == 0}
        safe_name = best(safe, key=safe.get) if safe and key != "max_attribute_lift" else None
        ok = None if ref is None or ours.get(key) is None else (
            ours[key] >= ref if best is max else ours[key] <= ref)
        out.append({"measure": key, "ours": ours.get(key), "reference": ref_name, "reference_value": ref,
                    "best_cart_order": best(order_vals) if order_vals else None,
                    "best_copy_free_peer": safe_name, "best_copy_free_value": safe.get(safe_name),
                    "reached": ok})
    out.append({"measure": "exact_copies", "ours": ours.get("exact_copies"), "reference": "0",
                "reference_value": 0, "best_cart_order": None, "best_copy_free_peer": None,
                "best_copy_free_value": None, "reached": ours.get("exact_copies") == 0})
    return out


AUTO_PEERS = ["cart", "cart_port", "arf", "tabularargn"]   # issue 11's peers
AUTO_AUC = 0.60                                             # issue 11's propensity AUC bound


def holdout_copies(frames: dict) -> int:
    """Exact copies a file of the training split's size holds at the holdout's rate: holdout
    rows equal to a training row, as a share, times the training rows (issue 11's "no more
    exact copies than held-out real rows show")."""
    from mixsynth.report.risk import exact_copies

    share = exact_copies(frames["train"], frames["holdout"])["all_columns"]["share"]
    return round(share * len(frames["train"]))


def auto_verdict(entry: dict) -> dict | None:
    """Issue 11 on one file: ours with nothing declared (``ours_auto``) against the best of
    AUTO_PEERS by mean CIO, and against the best of them within the holdout's copies."""
    methods = entry["methods"]
    ours = methods.get("ours_auto")
    if not ours:
        return None
    allowed = entry.get("holdout_copies")
    peers = {k: v["mean_cio"] for k, v in methods.items() if k in AUTO_PEERS and v.get("mean_cio") is not None}
    within = {k: c for k, c in peers.items()
              if allowed is not None and methods[k].get("exact_copies", np.inf) <= allowed}
    best = max(peers, key=peers.get) if peers else None
    best_within = max(within, key=within.get) if within else None
    copies_ok = None if allowed is None else ours["exact_copies"] <= allowed
    return {"ours": ours, "allowed_copies": allowed, "best": best, "best_value": peers.get(best),
            "best_within": best_within, "best_within_value": within.get(best_within),
            "cio": None if best is None else ours["mean_cio"] >= peers[best],
            "cio_within": None if best_within is None else ours["mean_cio"] >= within[best_within],
            "auc": None if ours.get("propensity_auc") is None else ours["propensity_auc"] <= AUTO_AUC,
            "copies": copies_ok}


def auto_section(res: dict) -> list[str]:
    """Issue 11's section of the page: what its figures are, and their table."""
    L = ["## Issue 11: nothing declared (`ours_auto`)", "",
         f"Ours with no declared response against the issue's peers ({', '.join(AUTO_PEERS)}): mean CIO at "
         f"least the best peer's, propensity AUC at most {AUTO_AUC:.2f}, exact copies no more than the "
         "holdout shows (holdout rows equal to a training row, scaled to the training rows). \"best "
         "within copies\" is the best peer whose own file keeps to that count too.", "",
         *auto_table(res), ""]
    return L


def auto_table(res: dict) -> list[str]:
    """Issue 11's figures (auto_verdict) on every file run, reached or missed, as a table."""
    mark = {True: "reached", False: "**missed**", None: "n/a"}
    L = ["| dataset | ours CIO | best peer | best within copies | CIO figure (within copies) | ours AUC | "
         "ours copies / holdout's | max V drop: auto / declared spec | figures |",
         "|---|---|---|---|---|---|---|---|---|"]
    for dataset, entry in res["datasets"].items():
        v = auto_verdict(entry)
        if v is None:
            continue
        o, rpl = v["ours"], entry["methods"].get("ours_rpl") or {}
        L.append(f"| {dataset} | {_fmt(o['mean_cio'], 3)} | {v['best']} {_fmt(v['best_value'], 3)} | "
                 + (f"{v['best_within']} {_fmt(v['best_within_value'], 3)}" if v["best_within"] else "—")
                 + f" | {mark[v['cio']]} ({mark[v['cio_within']]}) | {_fmt(o.get('propensity_auc'), 3)} | "
                 f"{_fmt(o['exact_copies'], 0)} / {_fmt(v['allowed_copies'], 0)} | "
                 f"{_fmt(o.get('max_cramers_v_drop'), 3)} / {_fmt(rpl.get('max_cramers_v_drop'), 3)} | "
                 f"AUC {mark[v['auc']]}, copies {mark[v['copies']]} |")
    return L


def _not_run(res: dict) -> list[str]:
    """The datasets the results do not hold yet."""
    return [d for d in DATASETS if d not in res["datasets"]]


def order_row(methods: dict, key: str, nd: int, beats) -> list[str]:
    """Cells for one measure: ours_rpl, ours_rl, the default-order CART, the random orders'
    min / median / max, and how many orders ``beats(order value, ours_rpl value)``."""
    vals = [o[key] for o in _orders(methods) if o.get(key) is not None]
    ours = (methods.get("ours_rpl") or {}).get(key)
    cells = [_fmt((methods.get(m) or {}).get(key), nd) for m, _, _ in MARKED]
    if not vals:
        return cells + ["n/a", "n/a"]
    spread = f"{_fmt(min(vals), nd)} / {_fmt(float(np.median(vals)), nd)} / {_fmt(max(vals), nd)}"
    share = "n/a" if ours is None else f"{sum(beats(v, ours) for v in vals)} of {len(vals)}"
    return cells + [spread, share]


def figure4_section(res: dict) -> list[str]:
    """The paper's Figure 4: the declared regression's utility over the random CART visit orders."""
    L = ["### Figure 4: regression utility over CART visit orders", "",
         "The paper synthesized its table with sequential CART in 100 random visit orders and showed how "
         "the mean interval overlap (CIO) and the mean standardized squared coefficient difference (its "
         "\"MSE\") of its reading regression spread over them, with its RPL file marked. Here: the random "
         "orders on each file (`cart_order_*`, one synthetic file each), scored on the declared regression "
         "(the first in the spec's `report:`; OLS, numeric predictors standardized); \"better\" counts the "
         "orders with a higher CIO, or a lower difference, than ours_rpl.", "", *figure4_table(res), ""]
    L += [f"![{p}]({p})" for p in res.get("figure4_plots", [])]
    return L + [""]


def figure4_table(res: dict) -> list[str]:
    """Figure 4's table: per file and measure, ours, the default-order CART and the spread
    over the random orders."""
    L = ["| dataset | measure | ours_rpl | ours_rl | cart, file order | random orders: min / median / max "
         "| orders better than ours_rpl |", "|---|---|---|---|---|---|---|"]
    for dataset in DATASETS:
        entry = res["datasets"].get(dataset)
        if entry is None:
            L.append(f"| {dataset} | not run yet | | | | | |")
            continue
        for key, name, nd, better in FIGURE4:
            beats = (lambda v, o: v > o) if better is max else (lambda v, o: v < o)
            L.append(f"| {dataset} | {name} | " + " | ".join(order_row(entry["methods"], key, nd, beats)) + " |")
    return L


def _outlier_checks(dataset: str) -> str:
    """The outlier checks of the dataset's example spec, as public -> sensitive."""
    from mixsynth import load_spec

    checks = load_spec(REPO / "examples" / f"{dataset}.yaml")["report"]["outliers"]
    return ", ".join(f"{o['public']} -> {o['sensitive']}" for o in checks)


def outlier_section(res: dict) -> list[str]:
    """The paper's Section 6.4: outlier attribute disclosure for ours and each CART order."""
    L = ["### Section 6.4: outlier attribute disclosure", "",
         "The paper regressed the real reading scores of the children with the 50 smallest and 50 largest "
         "birth-neighbourhood deprivation (NDI) values on the synthetic scores at the same order statistics: "
         "R² 0.107 for its RPL file, 0.11 on average over its CART orders, 0.5 for one order. Here each "
         "file's check is its spec's `outliers:` (on paper-layout the paper's NDI_Birth -> ReadScal1), and "
         "the figure is the report's `max_outlier_r2`: the larger of the two ends' R², 50 pairs each (near 0 "
         "protective; with no association its 95% quantile is about 0.08). The paper pooled the two ends, "
         "which a real correlation between the public and the sensitive column raises without any leak; "
         "the pooled R² is in each full report (`risk.outlier_disclosure[].both`). \"Above ours\" counts "
         "the orders with a higher R² than ours_rpl. The checks (public -> sensitive): "
         + "; ".join(f"{d} {_outlier_checks(d)}" for d in DATASETS) + ".", "", *outlier_table(res), ""]
    return L


def outlier_table(res: dict) -> list[str]:
    """Section 6.4's table: per file, the outlier R² of ours, the default-order CART and the
    spread over the random orders."""
    L = ["| dataset | ours_rpl | ours_rl | cart, file order | random orders: min / median / max "
         "| orders above ours_rpl |", "|---|---|---|---|---|---|"]
    for dataset in DATASETS:
        entry = res["datasets"].get(dataset)
        cells = (["not run yet", "", "", "", ""] if entry is None else
                 order_row(entry["methods"], "max_outlier_r2", 3, lambda v, o: v > o))
        L.append(f"| {dataset} | " + " | ".join(cells) + " |")
    return L


METHODS_TEXT = """\
| method | what runs | environment |
|---|---|---|
| ours_rpl | `mixsynth synthesize` with the example spec (extended rank-probit copula, sparse factors, BART for the declared responses), the spec's sampler settings | `.venv` |
| ours_rl | the same with `--method rl` (the paper's rank-likelihood baseline) | `.venv` |
| ours_auto | `mixsynth synthesize` (RPL) with the example spec less its `bart` section and its `role: response` declarations (those columns get the default role): how a new user who declares no response runs it (`out/peers/<file>/spec-auto.yaml`) | `.venv` |
| sdv_gaussian_copula | SDV `GaussianCopulaSynthesizer`, defaults; metadata detected, then column kinds set to the spec's (categorical, binary -> categorical; count, continuous -> numerical), no primary key | `.venv-peers` |
| sdv_ctgan | SDV `CTGANSynthesizer`, defaults except epochs (below), same metadata | `.venv-peers` |
| cart_port | python-synthpop's `CARTMethod` as its README runs it: impute missing cells, preprocess, CART with smoothing, proper, minibucket 5; the spec's categorical columns passed as text, since it takes coded categories for numbers. The port fits each column on all the others and draws the predictors from bootstrapped real rows: it has no visit order | `.venv-peers` |
| cart | synthpop's sequential CART (R `syn(method = "cart")` defaults: minbucket 5, no smoothing, not proper) on scikit-learn trees, in the file's column order (synthpop's default visit sequence) | `.venv-peers` |
| cart, random orders | the same in random visit orders (the paper's Figure 4: utility depends on the order); scored without the anonymeter attacks | `.venv-peers` |
| independent | every column resampled on its own from its empirical marginal | `.venv-peers` |
| arf | arfpy's adversarial random forest, defaults (30 trees, at most 10 adversarial rounds, truncated normal leaves). It takes no blank cells and treats only text/category columns as categorical: the spec's categorical columns go in as categories with a blank as a level of its own; a numeric column with blanks gets an indicator column and random observed values in its blanks, and the synthetic cells whose indicator comes out 1 are written back blank; whole-number columns are rounded. Its outer leaves are unbounded, so values can fall outside the real range (negative wages) | `.venv-arf` |
| tabularargn | MOSTLY AI's open engine (`mostlyai-engine`, TabularARGN) through split, analyze, encode, train, generate; its defaults (value protection on, its own 80/20 validation split and early stopping) except the training-time cap below, one torch thread, the spec's categorical columns encoded categorical, and rare categories sampled from the others (`SAMPLE`) rather than written `_RARE_`. Value protection drops rare levels and clips the tails of numbers | `.venv-argn` |
"""


def markdown(res: dict, out: Path) -> str:
    """The run's page, OUT.md: settings, the issue's figures, a table per file, the paper's
    Figure 4 and Section 6.4, the plots."""
    m, cfg = res["machine"], res["config"]
    command = "nice -n 19 .venv/bin/python benchmarks/peers.py" + (" --quick" if res["quick"] else "")
    seconds = sum(v["wall_seconds"] for e in res["datasets"].values() for v in e["methods"].values())
    capped = [d for d, e in res["datasets"].items() if e["ctgan_epochs"] < cfg["ctgan_max_epochs"]]
    L = [f"# Peer benchmark: mixsynth beside the synthesizers users would pick instead{' (quick run)' if res['quick'] else ''}", "",
         "Issue 6: parts 1-3 on the three small real files and the paper-layout simulator (a stand-in "
         "for the paper's confidential table), and part 4, the paper's Figure 4 and Section 6.4 (its "
         "Table 2 is `core.py`'s). "
         f"Every number is in `benchmarks/results/{out.name}.json`.", "",
         "## Machine, versions, seeds, command", "",
         f"- Machine: {m['cpu_count']} CPUs ({m['cpu_model']}), {m['platform']}, shared with other work "
         "(the \"other load\" column: cores other processes kept busy during each run, of 2); run on "
         f"{m['date']}.",
         f"- Product: mixsynth {m['versions']['mixsynth']} @ {(m['git_commit'] or '?')[:7]}"
         f"{' (with uncommitted changes in mixsynth/ by others at the time)' if m['git_uncommitted_in_mixsynth'] else ''}, "
         f"Python {m['python']}, " + ", ".join(f"{k} {v}" for k, v in m["versions"].items() if k != "mixsynth") + ".",
         *environment_lines(res),
         f"- Seeds: split {cfg['split_seed']} (80/20, `mixsynth split`), synthesis {cfg['synth_seed']} for every "
         f"method, report {cfg['report_seed']}, CART visit orders `numpy.random.default_rng({cfg['cart_order_seed']})"
         ".permutation`, one per order. SDV seeds numpy, random and torch before fitting, then samples from its own "
         "fixed seed (73251), as for its users.",
         "- Command: `bash benchmarks/peers/setup.sh`, `bash benchmarks/peers/setup-arf.sh` "
         f"and `bash benchmarks/peers/setup-argn.sh` once, then `{command}`; "
         f"the synthesizers' wall times add up to {seconds / 60:.0f} minutes here, and scoring adds "
         "about a third to that. "
         "`--only DATASET` re-runs one file; `--resume` keeps the methods the JSON already holds and runs "
         "the rest; `--methods M ...` runs only those methods; `--files N` scores N files per method; "
         "`--render` rewrites this page and the plots from the JSON.",
         *files_lines(res),
         "- Our sampler: " + ("the example specs' settings (`examples/<file>.yaml`)."
                              if not cfg["sweeps"] else
                              f"reduced for the quick run: {cfg['sweeps']}, BART {cfg['bart']}."),
         f"- CTGAN epochs: SDV's default 300, capped at {cfg['ctgan_max_steps']} optimizer steps (batch "
         f"{cfg['ctgan_batch']}) because of CPU time" + (
             ": the cap is what 300 epochs are on the ~1,300-row files and binds on " + (", ".join(capped) or "no file run here")
             + " (epochs per file in its section)."
             if not res["quick"] else " (quick run; epochs per file in its section)."),
         *(["- TabularARGN: training capped at " f"{cfg['argn_max_minutes']:g} minute(s) (the engine's own default "
            "is 14,400), on the CPU with " f"{cfg['argn_threads']} torch thread(s); the engine's early stopping "
            "may end it sooner (each run's log in `out/peers/<file>/tabularargn*.log` says which)."]
           if "argn_max_minutes" in cfg else []),
         "- Wall time is the whole subprocess (start-up and imports included); peak MiB is the largest "
         "summed resident memory (VmRSS) of the subprocess and all its descendants, sampled every "
         "0.25 s from /proc (our two chains are child processes; `getrusage` would give the largest "
         "single child, not the sum).",
         "- Scores: the product's report (`build_report`) of each synthetic file against the training "
         "split, with the 20% holdout for TSTR and DCR; no synthesizer sees the holdout. Every method "
         "gets the columns the spec models (its excluded columns dropped) and as many rows as the "
         "training split. Full reports are in `out/peers/<dataset>/<method>.report.json` (not committed).",
         "", "## Methods", "", METHODS_TEXT,
         "## The issue's figures", "",
         "Ours is `ours_rpl`. \"Best peer\" is the best of the peers run with their defaults "
         f"({', '.join(m + (' in the default order' if m == 'cart' else '') for m in PEERS)}); the best "
         "of the random CART orders is shown beside it, and the best peer whose file holds no exact copy "
         "of a training row (the issue's \"at a risk no higher\").", "",
         *verdicts_table(res),
         "", "The issue's figures are set for the real files; the paper-layout rows are for comparison.", ""]
    L += auto_section(res)
    for dataset in DATASETS:
        entry = res["datasets"].get(dataset)
        L += [f"## {dataset}", ""]
        if entry is None:
            L += [f"Not run yet: `{command} --only {dataset}` adds it and keeps the other files' results.", ""]
            continue
        L += [f"{entry['rows_train']:,} training rows, {entry['rows_holdout']:,} held out, "
              f"{entry['columns']} modelled columns; CTGAN {entry['ctgan_epochs']} epochs.", ""]
        L += table(entry) + [""]
    L += ["## The paper reproduced (issue 6 part 4)", ""]
    L += figure4_section(res) + outlier_section(res)
    if res.get("plots"):
        L += ["## Plots", "", "One per measure; a panel per file; ours as red diamonds, the random CART "
              "orders as grey points with their median as a black bar.", ""]
        L += [f"![{p}]({p})" for p in res["plots"]] + [""]
    L += ["Columns: mean CIO = mean confidence-interval overlap of the declared regression (1 perfect); "
          "mean std. sq. diff. = mean over its coefficients of ((real - synthetic) / real standard error)², "
          "the paper's \"MSE\" (0 perfect); max V drop = largest fall of Cramer's V over categorical pairs; exact copies = synthetic rows "
          "equal to a training row; attr. lift = largest attribute-inference lift over the sensitive "
          "columns; pMSE ratio = pMSE over its null (about 1 good); DCR share < q05 = share of synthetic "
          "rows closer to a training row than 95% of holdout rows are (about 0.05 expected); TSTR diff. "
          "= synthetic-trained minus real-trained score on the holdout; outlier R² = outlier attribute "
          "disclosure (near 0 protective); max TVD / max KS = worst marginal; other load = cores used by "
          "other processes during the run.", ""]
    L += runs_footer(res)
    return "\n".join(L) + "\n"


def verdicts_table(res: dict) -> list[str]:
    """The issue's figures on every file run (verdicts), reached or missed, as a table."""
    L = ["| dataset | measure | ours | best peer | its value | best CART order | best peer with 0 copies | figure |",
         "|---|---|---|---|---|---|---|---|"]
    for dataset in res["datasets"]:
        for v in verdicts(res["datasets"][dataset]):
            status = {True: "reached", False: "**missed**", None: "n/a"}[v["reached"]]
            nd = 0 if v["measure"] == "exact_copies" else 3
            L.append(f"| {dataset} | {v['measure']} | {_fmt(v['ours'], nd)} | {v['reference']} | "
                     f"{_fmt(v['reference_value'], nd)} | {_fmt(v['best_cart_order'], nd)} | "
                     + (f"{v['best_copy_free_peer']} {_fmt(v['best_copy_free_value'], nd)}" if v["best_copy_free_peer"] else "—")
                     + f" | {status} |")
    return L + [f"| {dataset} | not run yet | | | | | | |" for dataset in _not_run(res)]


def plots(res: dict, out: Path) -> list[str]:
    """One PNG per measure: a panel per dataset, methods on the y axis, the random CART orders
    as a strip of points with their median, ours marked."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    files = []
    datasets = list(res["datasets"])
    for key, heading, _ in COLUMNS[:-1]:                  # every column but the other load
        fig, axes = plt.subplots(1, len(datasets), figsize=(4.2 * len(datasets), 3.6), squeeze=False)
        for ax, dataset in zip(axes[0], datasets):
            methods = res["datasets"][dataset]["methods"]
            names = _single_runs(methods)
            for y, name in enumerate(names):
                v = methods[name].get(key)
                if v is not None:
                    ours = name.startswith("ours_")
                    ax.plot(v, y, "D" if ours else "o", color="C3" if ours else "C0", ms=8 if ours else 6)
                    sd = (methods[name].get("sd") or {}).get(key)
                    if sd:                                  # several files: their SD as a bar
                        ax.errorbar(v, y, xerr=sd, fmt="none", color="C3" if ours else "C0", capsize=3)
            vals = [o[key] for o in _orders(methods) if o.get(key) is not None]
            if vals:
                y = len(names)
                ax.plot(vals, np.full(len(vals), y) + np.linspace(-0.2, 0.2, len(vals)), ".", color="C7")
                ax.plot([np.median(vals)], [y], "|", color="k", ms=14)
                names = names + [f"cart, {len(vals)} orders"]
            ax.set_yticks(range(len(names)), names)
            ax.invert_yaxis()                                 # ours on top
            ax.set_title(dataset)
            ax.grid(axis="x", alpha=0.3)
        fig.suptitle(heading)
        fig.tight_layout()
        path = out.parent / f"{out.name}-{key}.png"
        fig.savefig(path, dpi=90)
        plt.close(fig)
        files.append(path.name)
    return files


def figure4_plots(res: dict, out: Path) -> list[str]:
    """The paper's Figure 4, one PNG per dataset: histograms over the random CART orders of the
    declared regression's mean CIO and mean standardized squared difference, with ours_rpl,
    ours_rl and the default-order CART as vertical lines."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    files = []
    for dataset, entry in res["datasets"].items():
        methods, orders = entry["methods"], _orders(entry["methods"])
        if not orders:
            continue
        fig, axes = plt.subplots(1, len(FIGURE4), figsize=(4.5 * len(FIGURE4), 3.4))
        for ax, (key, name, _, _) in zip(axes, FIGURE4):
            ax.hist([o[key] for o in orders if o.get(key) is not None], bins=10, color="C7", alpha=0.6,
                    label=f"{len(orders)} CART orders")
            for method, colour, line in MARKED:
                value = (methods.get(method) or {}).get(key)
                if value is not None:
                    ax.axvline(value, color=colour, ls=line, lw=2,
                               label="cart, file order" if method == "cart" else method)
            ax.set_xlabel(name)
            ax.set_ylabel("orders")
        axes[-1].legend(fontsize=8)
        fig.suptitle(f"{dataset}: the declared regression over {len(orders)} CART visit orders")
        fig.tight_layout()
        path = out.parent / f"{out.name}-figure4-{dataset}.png"
        fig.savefig(path, dpi=90)
        plt.close(fig)
        files.append(path.name)
    return files


def draw(res: dict, out: Path) -> None:
    """Every plot, their file names kept in ``res`` for the page."""
    res["plots"] = plots(res, out)
    res["figure4_plots"] = figure4_plots(res, out)


def environment_versions(env: str) -> list[str] | None:
    """The recorded packages' versions in a peer environment, or None if it is not there."""
    python = peer_python(env)
    if not python.exists():
        return None
    got = subprocess.run([str(python), "-m", "pip", "freeze"], capture_output=True, text=True).stdout
    return [line for line in got.splitlines() if line.lower().startswith(ENVIRONMENTS[env][1])]


def environment_lines(res: dict) -> list[str]:
    """One line per peer environment with its recorded versions (results written before there
    were several environments hold .venv-peers' alone, as ``peer_versions``)."""
    versions = res.get("environment_versions") or {".venv-peers": res.get("peer_versions")}
    return [f"- Peers in `{env}` (from `{ENVIRONMENTS[env][0]}`): " + ", ".join(versions[env]) + "."
            for env in ENVIRONMENTS if versions.get(env)]


def files_lines(res: dict) -> list[str]:
    """How the methods with several synthetic files were made and are shown."""
    files = res["config"].get("files", 1)
    if files == 1:
        return []
    return [f"- Files: {files} synthetic files per method, each scored on its own; the tables show the "
            "mean ± the SD over the files, the verdicts and plots use the mean; wall s and peak MiB are "
            f"for all {files} together. Ours makes its files in one fit (`--m {files}`: {files} posterior "
            "draws, as the product makes several files); each peer runs once per file, with synthesis seeds "
            f"{res['config']['synth_seed']} to {res['config']['synth_seed'] + files - 1} (their fit and "
            "sample are one step), so the peers' SD includes refitting and ours does not. The random CART "
            "orders keep one file each."]


def to_run(res: dict, cfg: dict, pieces: list[str], methods: list[str] | None) -> set[str]:
    """The methods this run will run on some file (the random CART orders as ``cart``): those
    named by --methods, else those the kept results lack (all of them in a fresh run)."""
    if methods is not None:
        return {m for m in [*OURS, *PEERS] if m in methods} | ({"cart"} if "cart_orders" in methods else set())
    names = set()
    for dataset in pieces:
        kept = res["datasets"].get(dataset, {}).get("methods", {})
        names |= {m for m in [*OURS, *PEERS] if m not in kept}
        if sum(k.startswith("cart_order_") for k in kept) < cfg["cart_orders"]:
            names.add("cart")
    return names


def options(ap) -> None:
    """peers.py's own options, beside the shared ones."""
    ap.add_argument("--render", action="store_true", help="rewrite the page and the plots from the JSON alone")
    ap.add_argument("--resume", action="store_true",
                    help="run only the methods the JSON lacks (after an interruption, or after new methods)")
    ap.add_argument("--files", type=int, default=1, metavar="N",
                    help="N synthetic files per method, each scored; reported as mean and SD")
    ap.add_argument("--methods", nargs="+", default=None, metavar="M",
                    help="run (or re-run) only these methods, keep the others (cart_orders: the random CART orders)")
    ap.add_argument("--rescore", action="store_true",
                    help="score the kept synthetic files again (after a fix to the report), keeping timings")


def main(argv=None) -> None:
    args, out, pieces, max_wait = parse_arguments(
        argv, __doc__.split("\n")[0], "peers", DATASETS,
        "3 CART orders, CTGAN 30 steps, our sampler 400 sweeps, BART 50 trees and 50 draws, TabularARGN 1 minute",
        options=options)
    resume, methods = args.resume, args.methods
    if args.render or args.rescore:
        res = json.loads(out.with_suffix(".json").read_text())
        if args.rescore:
            rescore(res, [d for d in pieces if d in res["datasets"]], methods)
            res["verdicts"] = {d: verdicts(e) for d, e in res["datasets"].items()}
            res["rescored"] = {"date": now(), "git_commit": machine()["git_commit"]}
            out.with_suffix(".json").write_text(json.dumps(res, indent=1, default=float) + "\n")
        draw(res, out)
        out.with_suffix(".md").write_text(markdown(res, out))
        return
    if args.files < 1:
        sys.exit("--files must be at least 1")
    known = [*OURS, *PEERS, "cart_orders"]
    if methods and set(methods) - set(known):
        sys.exit(f"unknown method(s) {', '.join(sorted(set(methods) - set(known)))}; use {', '.join(known)}")
    cfg = dict(QUICK if args.quick else FULL, files=args.files)
    res = {"quick": args.quick, "config": cfg, "machine": machine("matplotlib"), "peer_versions": [],
           "environment_versions": {}, "datasets": {}, "runs": {}}
    if (args.only or resume or methods) and out.with_suffix(".json").exists():
        old = json.loads(out.with_suffix(".json").read_text())
        if not same_settings(old.get("config", {}), cfg):
            sys.exit(f"{out.with_suffix('.json')} was written with other settings; use --out")
        res["datasets"] = {k: v for k, v in old["datasets"].items() if resume or methods or k not in pieces}
        res["runs"] = {k: v for k, v in old.get("runs", {}).items() if resume or methods or k not in pieces}
        res["environment_versions"] = old.get("environment_versions") or (
            {".venv-peers": old["peer_versions"]} if old.get("peer_versions") else {})
    needed = {environment(m) for m in to_run(res, cfg, pieces, methods)} - {None}
    missing = [env for env in ENVIRONMENTS if env in needed and not peer_python(env).exists()]
    if missing:
        sys.exit("no peer environment " + ", ".join(f"{env}: run `bash {ENVIRONMENTS[env][0]}` first" for env in missing))
    for env in needed:                            # the environments this run uses: their versions now
        res["environment_versions"][env] = environment_versions(env)
    res["peer_versions"] = res["environment_versions"].get(".venv-peers") or []

    def save():
        order = {d: res["datasets"][d] for d in DATASETS if d in res["datasets"]}
        res["datasets"] = order
        res["verdicts"] = {d: verdicts(e) for d, e in order.items()}
        out.with_suffix(".json").write_text(json.dumps(res, indent=1, default=float) + "\n")
        out.with_suffix(".md").write_text(markdown(res, out))

    for dataset in pieces:
        wait = wait_until_quiet(max_wait) if max_wait > 0 else None
        t0 = time.perf_counter()
        run_dataset(dataset, cfg, res, save, methods)
        res["runs"][dataset] = {"date": now(), "git_commit": res["machine"]["git_commit"],
                                "seconds": time.perf_counter() - t0, "wait": wait}
        save()
    draw(res, out)
    save()
    log(f"done -> {out.with_suffix('.json')}, {out.with_suffix('.md')}, {len(res['plots']) + len(res['figure4_plots'])} plots")


if __name__ == "__main__":
    main()
