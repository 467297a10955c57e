"""Core benchmarks of mixsynth: sampler speed, a real fit, synthesis speed, the paper's Table 2.

    python benchmarks/core.py            # full run, several minutes -> results/core.{json,md}
    python benchmarks/core.py --quick    # smoke run, about a minute -> results/core-quick.{json,md}

Pieces (see benchmarks/README.md):
  a. Gibbs sweeps per second of one chain on the paper-layout table (n = 19,364, p = 26),
     numba on every core, BLAS held to one thread as in ``run_chain``;
  b. a real fit with CopulaSynthesizer (2 chains in parallel processes): wall time, bulk ESS
     of the entries of C per second, max R-hat, peak resident memory of the process tree;
  c. seconds to synthesize 19,364 rows from that model (median of 5 calls);
  d. the paper's Table 2 on ``paper_simulation(n=5000, seed=0)``: RPL vs RL, S synthetic
     files each from different posterior draws, MSE of the group means of x2 over the 5
     levels of x1, and the share of multiply-classified rows.

Everything runs in sequence in this process (the fit's chains in two child processes), so
no two heavy pieces compete for the machine's cores. Results are written after every piece.
"""
import argparse
import datetime as dt
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

# Full-run and quick settings. Seeds are fixed; every one is written to the results.
FULL = dict(
    layout_n=19_364, layout_seed=0,
    timing_warmup=50, timing_sweeps=300, timing_sweeps_1thread=150, timing_seed=0,
    fit_sweeps=10_000, fit_burn_in=5_000, fit_thin=10, fit_chains=2, fit_seed=0,
    synth_calls=5, synth_seeds=[0, 1, 2, 3, 4], synth_warmup_seed=1_000,
    sim_n=5_000, sim_seed=0,
    sim_sweeps=4_000, sim_burn_in=2_000, sim_thin=4, sim_chains=1, sim_fit_seed=0,
    files=500,
)
QUICK = dict(FULL, timing_warmup=20, timing_sweeps=100, timing_sweeps_1thread=50,
             fit_sweeps=1_000, fit_burn_in=500, fit_thin=2,
             sim_sweeps=1_000, sim_burn_in=500, sim_thin=2, files=50)

# The targets and the paper's figures, quoted beside the measurements.
TARGETS = {
    "sweeps_per_second": 25.0,            # 10,000 sweeps in under 7 minutes
    "synthesis_seconds_19364": 5.0,
    "paper_rl_mse": 2.359, "paper_rl_mse_se": 0.763, "paper_rl_multiply_classified": 0.124,
    "authors_r_sweeps_per_second_frozen": 2.4,   # columns with > 120 distinct values frozen
    "authors_r_sweeps_per_second_all": 0.012,    # every column resampled
}


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# -- memory and the machine's other load ---------------------------------------------------

CLK_TCK = os.sysconf("SC_CLK_TCK")


def _proc_table() -> dict[int, tuple[int, float]]:
    """pid -> (parent pid, CPU seconds used so far) for every process, from /proc."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        # the command name may hold spaces; the fields after its closing parenthesis are fixed
        f = stat[stat.rfind(")") + 2:].split()
        table[int(entry)] = (int(f[1]), (int(f[11]) + int(f[12])) / CLK_TCK)
    return table


def _descendants(root: int, table: dict) -> set[int]:
    tree, frontier = {root}, [root]
    while frontier:
        p = frontier.pop()
        kids = [c for c, (pp, _) in table.items() if pp == p and c not in tree]
        tree.update(kids)
        frontier.extend(kids)
    return tree


def _rss_kib(pids) -> int:
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
                        break
        except OSError:
            pass
    return total


def cpu_snapshot() -> dict:
    """Wall clock, CPU seconds the whole machine was busy, and CPU seconds this benchmark
    (this process, its waited-for children and its live descendants) used so far."""
    with open("/proc/stat") as fh:
        v = [int(x) for x in fh.readline().split()[1:]]
    busy = (v[0] + v[1] + v[2] + v[5] + v[6] + (v[7] if len(v) > 7 else 0)) / CLK_TCK
    t = os.times()
    me = os.getpid()
    table = _proc_table()
    live = sum(table[p][1] for p in _descendants(me, table) if p != me)
    return {"wall": time.monotonic(), "busy": busy,
            "ours": t.user + t.system + t.children_user + t.children_system + live}


def other_load(a: dict, b: dict) -> dict:
    """Cores used by other processes on the machine between snapshots a and b (a process of
    ours that ended between them without being waited for counts as other: an upper bound)."""
    wall = b["wall"] - a["wall"]
    ours = b["ours"] - a["ours"]
    others = max(0.0, (b["busy"] - a["busy"]) - ours)
    return {"seconds": wall, "our_cores": ours / wall if wall else 0.0,
            "other_cores": others / wall if wall else 0.0}


def wait_until_quiet(max_wait: float, threshold: float = 0.25, window: float = 5.0) -> dict:
    """Wait (up to ``max_wait`` s) until other processes use under ``threshold`` cores over
    ``window`` seconds; returns how long it waited and the last load seen."""
    t0 = time.monotonic()
    while True:
        a = cpu_snapshot()
        time.sleep(window)
        load = other_load(a, cpu_snapshot())["other_cores"]
        waited = time.monotonic() - t0
        if load < threshold or waited >= max_wait:
            if waited > window + 1:
                log(f"   waited {waited:.0f} s for other work on the machine (now {load:.2f} cores)")
            return {"waited_seconds": waited, "other_cores_at_start": load}


class TreeMemory:
    """Samples the summed RSS of this process and its descendants in a background thread."""

    def __init__(self, interval: float = 0.25):
        self.interval, self.peak_kib, self.samples = interval, 0, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        me = os.getpid()
        while not self._stop.is_set():
            self.peak_kib = max(self.peak_kib, _rss_kib(_descendants(me, _proc_table())))
            self.samples += 1
            self._stop.wait(self.interval)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def timed_synthesize(real, *flags: str) -> dict:
    """``mixsynth synthesize`` with defaults (and ``flags``) on ``real`` as a whole command,
    once the machine is quiet: {wall_seconds, stdout, synthetic (the frame written),
    other_cores_at_start}."""
    import pandas as pd

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "real.csv"
        real.to_csv(path, index=False)
        quiet = wait_until_quiet(120)
        t0 = time.perf_counter()
        done = subprocess.run([str(Path(sys.executable).with_name("mixsynth")), "synthesize", str(path),
                               "--out", str(Path(tmp) / "syn.csv"), "--no-progress", *flags],
                              capture_output=True, text=True, check=True)
        wall = time.perf_counter() - t0
        synthetic = pd.read_csv(Path(tmp) / "syn.csv")
    return {"wall_seconds": wall, "stdout": done.stdout, "synthetic": synthetic,
            "other_cores_at_start": quiet["other_cores_at_start"]}


def rusage_kib() -> dict:
    """Peak RSS (KiB on Linux) of this process and of its largest waited-for descendant."""
    return {"self_maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
            "children_maxrss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}


# -- machine -------------------------------------------------------------------------------

def machine() -> dict:
    import numba
    cpu = None
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next((l.split(":", 1)[1].strip() for l in fh if l.startswith("model name")), None)
    except OSError:
        pass

    def git(*args):
        try:
            return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True,
                                  timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return None

    dirty = git("status", "--porcelain", "--", "mixsynth")
    return {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "cpu_count": os.cpu_count(), "cpu_model": cpu,
        "numba_threads": numba.get_num_threads(),
        "platform": platform.platform(), "python": platform.python_version(),
        "versions": {p: version(p) for p in ("mixsynth", "numpy", "numba", "scipy", "pandas", "arviz")},
        "git_commit": git("rev-parse", "HEAD"),
        "git_uncommitted_in_mixsynth": dirty.splitlines() if dirty else [],
    }


# -- a. sweeps per second ------------------------------------------------------------------

def bench_sweeps(cfg: dict) -> dict:
    import numba
    from threadpoolctl import threadpool_limits

    from mixsynth import infer_spec
    from mixsynth.constraints import initial_latent
    from mixsynth.datasets import paper_layout
    from mixsynth.encode import encode
    from mixsynth.kernels.latent import LEVEL
    from mixsynth.kernels.truncnorm import seed_streams
    from mixsynth.sampler import NOISE_STREAMS, Prior, choose_factors, initial_state, sweep
    from mixsynth.schema import to_codes

    frame = paper_layout(n=cfg["layout_n"], seed=cfg["layout_seed"])
    spec = infer_spec(frame)
    columns, cons = encode(spec, to_codes(frame, spec), "rpl")
    k = choose_factors(initial_latent(cons), 0.95)
    intercept = cons.kind == LEVEL
    prior = Prior()

    def run(threads: int, warmup: int, sweeps: int) -> dict:
        numba.set_num_threads(threads)
        streams = seed_streams(np.random.SeedSequence(1), len(columns))
        noise_streams = seed_streams(np.random.SeedSequence(2), NOISE_STREAMS)
        state = initial_state(cons, k, np.random.default_rng(cfg["timing_seed"]))
        rng = np.random.default_rng(3)
        snap = cpu_snapshot()
        with threadpool_limits(1, user_api="blas"):
            t0 = time.perf_counter()
            sweep(state, cons, intercept, prior, rng, streams, noise_streams)
            first = time.perf_counter() - t0
            for _ in range(warmup - 1):
                sweep(state, cons, intercept, prior, rng, streams, noise_streams)
            times = np.empty(sweeps)
            t_all = time.perf_counter()
            for i in range(sweeps):
                t0 = time.perf_counter()
                sweep(state, cons, intercept, prior, rng, streams, noise_streams)
                times[i] = time.perf_counter() - t0
            total = time.perf_counter() - t_all
        load = other_load(snap, cpu_snapshot())
        return {"other_cores": load["other_cores"], "our_cores": load["our_cores"],"numba_threads": threads, "warmup_sweeps": warmup, "first_sweep_seconds": first,
                "timed_sweeps": sweeps, "seconds": total, "sweeps_per_second": sweeps / total,
                "sweep_ms_median": 1e3 * float(np.median(times)),
                "sweep_ms_p95": 1e3 * float(np.percentile(times, 95)),
                "block_sweeps": 50,
                "block_sweeps_per_second": [len(b) / float(b.sum()) for b in np.array_split(times, max(1, sweeps // 50))],
                "minutes_for_10000_sweeps": 10_000 / (sweeps / total) / 60}

    default_threads = numba.get_num_threads()
    try:
        all_cores = run(default_threads, cfg["timing_warmup"], cfg["timing_sweeps"])
        log(f"a. {all_cores['sweeps_per_second']:.1f} sweeps/s on {default_threads} numba threads")
        one = run(1, 5, cfg["timing_sweeps_1thread"])
        log(f"a. {one['sweeps_per_second']:.1f} sweeps/s on 1 numba thread")
    finally:
        numba.set_num_threads(default_threads)
    return {"n": cfg["layout_n"], "p": len(spec.columns), "p_star": len(columns), "k": k,
            "k_rule": "choose_factors(initial_latent, 0.95) (the sampler's default)",
            "all_cores": all_cores, "one_thread": one}


# -- b, c. a real fit and synthesis --------------------------------------------------------

def bench_fit(cfg: dict) -> tuple[dict, object, object]:
    from mixsynth import CopulaSynthesizer, SamplerSettings, infer_spec
    from mixsynth.datasets import paper_layout

    frame = paper_layout(n=cfg["layout_n"], seed=cfg["layout_seed"])
    settings = SamplerSettings(sweeps=cfg["fit_sweeps"], burn_in=cfg["fit_burn_in"],
                               thin=cfg["fit_thin"], chains=cfg["fit_chains"])
    model = CopulaSynthesizer(infer_spec(frame), settings, method="rpl", seed=cfg["fit_seed"])
    snap = cpu_snapshot()
    with TreeMemory() as mem:
        t0 = time.perf_counter()
        model.fit(frame)
        wall = time.perf_counter() - t0
    load = other_load(snap, cpu_snapshot())
    conv = model.convergence_
    usage = rusage_kib()
    out = {
        "settings": settings.to_dict(), "method": "rpl", "seed": cfg["fit_seed"], "workers": "default",
        "p_star": len(model.columns_), "k": model.factors_,
        "wall_seconds": wall, "other_cores": load["other_cores"], "our_cores": load["our_cores"],
        "sweeps_per_second_per_chain_incl_startup": cfg["fit_sweeps"] / wall,
        "rhat_max": conv["rhat_max"], "rhat_median": conv["rhat_median"],
        "share_rhat_below_1_01": conv["share_rhat_below_1_01"],
        "ess_bulk_min": conv["ess_bulk_min"], "ess_bulk_median": conv["ess_bulk_median"],
        "ess_bulk_min_per_second": conv["ess_bulk_min"] / wall,
        "ess_bulk_median_per_second": conv["ess_bulk_median"] / wall,
        "convergence": conv,
        "memory": {
            "tree_peak_rss_mib_sampled": mem.peak_kib / 1024, "samples": mem.samples,
            "self_maxrss_mib": usage["self_maxrss_kib"] / 1024,
            "children_maxrss_mib": usage["children_maxrss_kib"] / 1024,
            "note": "tree_peak = max over samples (every 0.25 s) of the summed VmRSS of this process "
                    "and its descendants during the fit; getrusage: RUSAGE_SELF is this process's peak "
                    "over the whole script so far, RUSAGE_CHILDREN the peak of the largest single "
                    "child (not a sum over the two chain processes).",
        },
    }
    log(f"b. fit {wall:.1f} s, R-hat max {conv['rhat_max']:.3f}, ESS min {conv['ess_bulk_min']:.0f}, "
        f"tree peak {mem.peak_kib / 1024:.0f} MiB")
    return out, model, frame


def bench_synthesis(cfg: dict, model) -> dict:
    snap = cpu_snapshot()
    t0 = time.perf_counter()
    model.sample(seed=cfg["synth_warmup_seed"])
    warm = time.perf_counter() - t0
    times, exact = [], []
    for s in cfg["synth_seeds"][: cfg["synth_calls"]]:
        t0 = time.perf_counter()
        syn, info = model.sample(seed=s, return_info=True)
        times.append(time.perf_counter() - t0)
        exact.append(info["exact_share"])
    assert len(syn) == cfg["layout_n"]
    load = other_load(snap, cpu_snapshot())
    out = {"other_cores": load["other_cores"], "our_cores": load["our_cores"],"rows": len(syn), "calls": len(times), "seeds": cfg["synth_seeds"][: cfg["synth_calls"]],
           "seconds_median": statistics.median(times), "seconds_each": times,
           "warmup_call_seconds": warm, "exact_share_each": exact}
    log(f"c. synthesis of {len(syn)} rows: median {out['seconds_median']:.2f} s")
    return out


# -- d. the paper's Table 2 ----------------------------------------------------------------

def bench_table2(cfg: dict) -> dict:
    from mixsynth import CopulaSynthesizer, SamplerSettings, infer_spec
    from mixsynth.datasets import paper_simulation

    real = paper_simulation(n=cfg["sim_n"], seed=cfg["sim_seed"])
    spec = infer_spec(real, {"columns": {"x1": {"kind": "categorical"}}})
    levels = sorted(real["x1"].unique().tolist())
    real_means = real.groupby("x1")["x2"].mean().reindex(levels).to_numpy(float)
    real_vars = real.groupby("x1")["x2"].var().reindex(levels).to_numpy(float)
    real_sizes = real["x1"].value_counts().reindex(levels).to_numpy(float)
    # expected MSE of a file drawn row by row from the real table itself (a bootstrap copy):
    # its group means differ from the real ones by sampling noise alone
    floor = float(np.mean(real_vars / real_sizes))
    settings = SamplerSettings(sweeps=cfg["sim_sweeps"], burn_in=cfg["sim_burn_in"],
                               thin=cfg["sim_thin"], chains=cfg["sim_chains"])
    S = cfg["files"]
    out = {"n": cfg["sim_n"], "data_seed": cfg["sim_seed"], "settings": settings.to_dict(),
           "fit_seed": cfg["sim_fit_seed"], "files": S,
           "file_seeds": f"sample(seed=s, draw=s % n_draws) for s in 0..{S - 1}",
           "levels": levels, "real_group_means": real_means.tolist(),
           "mse_bootstrap_floor": floor,
           "mse_bootstrap_floor_note": "mean over levels of var(x2 | level) / n_level in the real table: "
                                       "the expected MSE of a bootstrap copy of the real table, i.e. sampling "
                                       "noise of a synthetic file of n rows alone",
           "real_group_sizes": real["x1"].value_counts().reindex(levels).tolist(),
           "real_level_shares": real["x1"].value_counts(normalize=True).reindex(levels).tolist(),
           "methods": {}}
    for method in ("rpl", "rl"):
        model = CopulaSynthesizer(spec, settings, method=method, seed=cfg["sim_fit_seed"], workers=1)
        snap = cpu_snapshot()
        t0 = time.perf_counter()
        model.fit(real)
        fit_wall = time.perf_counter() - t0
        n_draws = model.n_draws_
        mse = np.empty(S)
        syn_means = np.full((S, len(levels)), np.nan)
        syn_shares = np.empty((S, len(levels)))
        multi, none, exact = np.empty(S), np.empty(S), np.empty(S)
        empty_levels = 0
        t0 = time.perf_counter()
        for s in range(S):
            syn, info = model.sample(seed=s, draw=s % n_draws, return_info=True)
            x1 = syn["x1"].astype("int64")
            means = syn["x2"].astype(float).groupby(x1).mean().reindex(levels).to_numpy(float)
            empty_levels += int(np.isnan(means).sum())
            syn_means[s] = means
            syn_shares[s] = x1.value_counts(normalize=True).reindex(levels).fillna(0.0).to_numpy(float)
            mse[s] = np.nanmean((means - real_means) ** 2)
            multi[s] = info.get("multiply_classified", 0.0)
            none[s] = info.get("unclassified", 0.0)
            exact[s] = info.get("exact_share", np.nan)
        synth_wall = time.perf_counter() - t0
        sd = float(mse.std(ddof=1)) if S > 1 else float("nan")
        load = other_load(snap, cpu_snapshot())
        conv = model.convergence_
        out["methods"][method] = {
            "other_cores": load["other_cores"], "our_cores": load["our_cores"],
            "p_star": len(model.columns_), "k": model.factors_, "n_draws": n_draws,
            "draws_reused": S > n_draws,
            "fit_seconds": fit_wall, "synthesis_seconds_total": synth_wall,
            "synthesis_seconds_per_file": synth_wall / S,
            "rhat_max": conv["rhat_max"], "ess_bulk_min": conv["ess_bulk_min"],
            "mse_mean": float(mse.mean()), "mse_sd_over_files": sd, "mse_se_of_mean": sd / np.sqrt(S),
            "mse_median": float(np.median(mse)),
            "multiply_classified_mean": float(multi.mean()), "multiply_classified_max": float(multi.max()),
            "unclassified_mean": float(none.mean()),
            "unclassified_note": "mixsynth's info['unclassified']: rows with every RL dummy off, which "
                                 "decode to the base level (x1 = first level), not an error",
            "synthetic_level_shares_avg": syn_shares.mean(axis=0).tolist(),
            "exact_share_mean": float(np.nanmean(exact)) if not np.isnan(exact).all() else None,
            "synthetic_group_means_avg": np.nanmean(syn_means, axis=0).tolist(),
            "synthetic_group_means_sd": np.nanstd(syn_means, axis=0, ddof=1).tolist(),
            "empty_levels_total": empty_levels,
        }
        log(f"d. {method}: fit {fit_wall:.1f} s, {S} files in {synth_wall:.1f} s, MSE {mse.mean():.3f} "
            f"(sd {sd:.3f}), multiply classified {multi.mean():.1%}")
    return out


# -- report --------------------------------------------------------------------------------

def _f(x, nd=2):
    return "n/a" if x is None else f"{x:,.{nd}f}"


def _load(x) -> str:
    """Cores other processes used during a measurement (the machine is shared)."""
    v = x.get("other_cores") if x else None
    return "n/a" if v is None else f"{v:.2f}"


def markdown(res: dict) -> str:
    m = res["machine"]
    L = [f"# mixsynth core benchmarks{' (quick run)' if res['quick'] else ''}", "",
         f"{m['date']} · {m['cpu_count']} CPUs ({m['cpu_model']}) · {m['platform']} · Python {m['python']} · "
         f"numpy {m['versions']['numpy']} · numba {m['versions']['numba']} · mixsynth "
         f"{m['versions']['mixsynth']} @ {(m['git_commit'] or '?')[:7]}"
         f"{' + uncommitted changes' if m['git_uncommitted_in_mixsynth'] else ''}", "",
         "Written by `python benchmarks/core.py" + (" --quick" if res["quick"] else "") +
         "`; every figure and setting is in the JSON beside this file. \"other load\" is the number "
         "of cores that processes outside the benchmark kept busy during that measurement "
         f"(of {m['cpu_count']}); figures taken with other load above ~0.25 are slowed by it.", ""]
    a, b, c = res.get("sweeps"), res.get("fit"), res.get("synthesis")
    if a or b:
        L += ["## Sampler and synthesis on the paper-layout table", ""]
        if a:
            L += [f"n = {a['n']:,}, p = {a['p']}, p* = {a['p_star']} latent columns, k = {a['k']} factors.", ""]
        L += ["| measure | measured | other load | target / reference |", "|---|---|---|---|"]
    if a:
        al, one = a["all_cores"], a["one_thread"]
        L += [f"| Gibbs sweeps/s, one chain, {al['numba_threads']} numba threads ({al['timed_sweeps']} sweeps "
              f"after {al['warmup_sweeps']} warm-up) | **{_f(al['sweeps_per_second'], 1)}** "
              f"({_f(al['sweep_ms_median'], 1)} ms/sweep median; 10,000 sweeps in "
              f"{_f(al['minutes_for_10000_sweeps'], 1)} min; blocks of 50 sweeps: "
              f"{_f(min(al['block_sweeps_per_second']), 1)}-{_f(max(al['block_sweeps_per_second']), 1)}) | {_load(al)} | "
              "≥ 25 sweeps/s (10,000 sweeps under 7 min); authors' R sampler: ~2.4 sweeps/s only by "
              "freezing columns with >120 distinct values, 0.012 sweeps/s resampling every column |",
              f"| Gibbs sweeps/s, one chain, 1 numba thread ({one['timed_sweeps']} sweeps; each chain's "
              f"share of the machine in a 2-chain fit) | {_f(one['sweeps_per_second'], 1)} | {_load(one)} | — |"]
    if b:
        s = b["settings"]
        mem = b["memory"]
        L += [f"| Fit wall time, {s['chains']} chains in parallel processes, {s['sweeps']:,} sweeps "
              f"({s['burn_in']:,} burn-in, thin {s['thin']}) | **{_f(b['wall_seconds'], 1)} s** "
              f"({_f(b['sweeps_per_second_per_chain_incl_startup'], 1)} sweeps/s per chain incl. start-up) | "
              f"{_load(b)} | — |",
              f"| Bulk ESS per second of wall time over the {b['convergence']['entries']} entries of C, "
              f"min / median | {_f(b['ess_bulk_min_per_second'], 3)} / {_f(b['ess_bulk_median_per_second'], 3)} "
              f"(ESS {_f(b['ess_bulk_min'], 0)} / {_f(b['ess_bulk_median'], 0)} of "
              f"{b['convergence']['chains'] * b['convergence']['draws_per_chain']} draws) | {_load(b)} | — |",
              f"| Max R-hat over the entries of C | {_f(b['rhat_max'], 3)} (median {_f(b['rhat_median'], 3)}; "
              f"{_f(100 * b['share_rhat_below_1_01'], 1)}% below 1.01) | | < 1.01 usual |",
              f"| Peak resident memory of the fit, this process + chain processes | "
              f"{_f(mem['tree_peak_rss_mib_sampled'], 0)} MiB (sampled sum; getrusage maxrss: self "
              f"{_f(mem['self_maxrss_mib'], 0)} MiB, largest child {_f(mem['children_maxrss_mib'], 0)} MiB) | | — |"]
    if c:
        L += [f"| Synthesize {c['rows']:,} rows (median of {c['calls']} `sample` calls) | "
              f"**{_f(c['seconds_median'])} s** (first call {_f(c['warmup_call_seconds'])} s) | {_load(c)} | < 5 s |"]
    if a or b:
        L.append("")
    d = res.get("table2")
    if d:
        r, rl = d["methods"].get("rpl"), d["methods"].get("rl")
        s = d["settings"]
        L += ["## The paper's Table 2 (simulation, n = {:,})".format(d["n"]), "",
              f"`paper_simulation(n={d['n']}, seed={d['data_seed']})`, x1 declared categorical; {s['sweeps']:,} "
              f"sweeps, {s['burn_in']:,} burn-in, thin {s['thin']}, {s['chains']} chain; {d['files']} synthetic "
              "files per method, file s from posterior draw s (cycling if fewer draws). MSE = mean over the "
              "5 levels of x1 of (synthetic - real group mean of x2)^2; sd = spread over files, "
              f"se = sd / sqrt(files). For scale: a bootstrap copy of the real table would score "
              f"MSE ≈ {_f(d.get('mse_bootstrap_floor'), 3)} from sampling noise alone.", "",
              "| method | MSE mean | sd over files | se of mean | multiply classified | target / paper |",
              "|---|---|---|---|---|---|"]
        if r:
            L.append(f"| RPL | **{_f(r['mse_mean'], 3)}** | {_f(r['mse_sd_over_files'], 3)} | "
                     f"{_f(r['mse_se_of_mean'], 3)} | **{_f(100 * r['multiply_classified_mean'], 1)}%** | "
                     "well below RL; 0% by construction |")
        if rl:
            L.append(f"| RL | {_f(rl['mse_mean'], 3)} | {_f(rl['mse_sd_over_files'], 3)} | "
                     f"{_f(rl['mse_se_of_mean'], 3)} | {_f(100 * rl['multiply_classified_mean'], 1)}% "
                     f"({_f(100 * rl['unclassified_mean'], 1)}% with no dummy on, read as the base level) | "
                     "paper's RL: MSE 2.359 (s.e. 0.763), 12.4% multiply classified |")
        L += ["", "Group means of x2 (real; average over the synthetic files):", "",
              "| x1 | " + " | ".join(str(v) for v in d["levels"]) + " |",
              "|---|" + "---|" * len(d["levels"]),
              "| real | " + " | ".join(_f(v) for v in d["real_group_means"]) + " |"]
        for name, mm in d["methods"].items():
            L.append(f"| {name.upper()} | " + " | ".join(_f(v) for v in mm["synthetic_group_means_avg"]) + " |")
        L += ["", "Shares of the levels of x1 (real; average over the synthetic files):", "",
              "| x1 | " + " | ".join(str(v) for v in d["levels"]) + " |",
              "|---|" + "---|" * len(d["levels"]),
              "| real | " + " | ".join(_f(100 * v, 1) + "%" for v in d["real_level_shares"]) + " |"]
        for name, mm in d["methods"].items():
            L.append(f"| {name.upper()} | " + " | ".join(_f(100 * v, 1) + "%" for v in mm["synthetic_level_shares_avg"]) + " |")
        L += ["", "| method | p* | k | fit | synthesis per file | R-hat max (split chain) | ESS min | other load |",
              "|---|---|---|---|---|---|---|---|"]
        for name, mm in d["methods"].items():
            L.append(f"| {name.upper()} | {mm['p_star']} | {mm['k']} | {_f(mm['fit_seconds'], 1)} s | "
                     f"{_f(mm['synthesis_seconds_per_file'], 3)} s | {_f(mm['rhat_max'], 3)} | "
                     f"{_f(mm['ess_bulk_min'], 0)} | {_load(mm)} |")
        L.append("")
    L += runs_footer(res)
    return "\n".join(L)


def runs_footer(res: dict) -> list[str]:
    """Markdown lines naming when, at which commit and how long each piece ran."""
    runs = res.get("runs", {})
    if not runs:
        return []
    return ["Pieces run (UTC, commit, wall seconds incl. waiting for a quiet machine): " + "; ".join(
        f"{k} {v['date']} @ {(v.get('git_commit') or '?')[:7]}"
        + (f", {v['seconds']:.0f} s" if "seconds" in v else "") for k, v in runs.items()) + ".", ""]


def run_piece(res: dict, key: str, fn, max_wait: float) -> None:
    """Run one benchmark piece ``fn() -> dict`` after waiting up to ``max_wait`` seconds for a
    quiet machine; keep its result (with the wait) as ``res[key]`` and when, at which commit
    and in how many seconds it ran as ``res["runs"][key]``."""
    wait = wait_until_quiet(max_wait) if max_wait > 0 else None
    t0 = time.perf_counter()
    res[key] = fn()
    res[key]["wait"] = wait
    res["runs"][key] = {"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                        "git_commit": res["machine"]["git_commit"], "seconds": time.perf_counter() - t0}


def save_results(res: dict, out: Path, markdown) -> None:
    """Write ``res`` (with the process's resource use so far) to OUT.json and ``markdown(res)``
    to OUT.md; called after every piece, so an interrupted run keeps what it finished."""
    res["rusage_end"] = rusage_kib()
    out.with_suffix(".json").write_text(json.dumps(res, indent=2, default=float) + "\n")
    out.with_suffix(".md").write_text(markdown(res))


def parse_arguments(argv, description: str, name: str, pieces: list[str], quick_help: str):
    """The options every benchmark script shares; returns (args, output path without
    extension, pieces to run, seconds to wait for a quiet machine)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--quick", action="store_true", help=f"{quick_help} (a smoke run; results/{name}-quick.*)")
    ap.add_argument("--out", type=Path, default=None,
                    help=f"output path without extension (default benchmarks/results/{name} or {name}-quick)")
    ap.add_argument("--wait-quiet", type=float, default=None, metavar="SECONDS",
                    help="before each piece wait up to SECONDS for other processes to use under "
                         "0.25 cores (default 120, 0 with --quick)")
    ap.add_argument("--only", nargs="+", choices=pieces, default=None,
                    help="run only these pieces, keeping the others from the existing results")
    args = ap.parse_args(argv)
    out = args.out or HERE / "results" / (f"{name}-quick" if args.quick else name)
    out.parent.mkdir(parents=True, exist_ok=True)
    max_wait = args.wait_quiet if args.wait_quiet is not None else (0.0 if args.quick else 120.0)
    return args, out, args.only or pieces, max_wait


def main(argv=None) -> None:
    args, out, pieces, max_wait = parse_arguments(
        argv, __doc__.split("\n")[0], "core", ["sweeps", "fit", "table2"],
        "short chains and 50 files per method; 'fit' includes synthesis timing")
    cfg = QUICK if args.quick else FULL

    res = {"quick": args.quick, "config": cfg, "targets": TARGETS, "machine": machine(), "runs": {}}
    if args.only and out.with_suffix(".json").exists():
        # re-running some pieces: keep the others from the existing results
        old = json.loads(out.with_suffix(".json").read_text())
        if old.get("config") != cfg:
            raise SystemExit(f"{out.with_suffix('.json')} was written with other settings; "
                             "use --out for a separate file")
        for key in ("sweeps", "fit", "synthesis", "table2"):
            if key in old:
                res[key] = old[key]
        res["runs"] = old.get("runs") or {k: {"date": old["machine"]["date"],
                                              "git_commit": old["machine"]["git_commit"]}
                                          for k in ("sweeps", "fit", "synthesis", "table2") if k in old}
    t_start = time.perf_counter()

    def run(key, fn):
        run_piece(res, key, fn, max_wait)
        save_results(res, out, markdown)

    if "sweeps" in pieces:
        log("a. timing Gibbs sweeps")
        run("sweeps", lambda: bench_sweeps(cfg))
    if "fit" in pieces:
        log(f"b. fitting {cfg['fit_chains']} chains x {cfg['fit_sweeps']} sweeps")
        holder = {}

        def fit():
            out_fit, holder["model"], _ = bench_fit(cfg)
            return out_fit
        run("fit", fit)
        run("synthesis", lambda: bench_synthesis(cfg, holder.pop("model")))
    if "table2" in pieces:
        log(f"d. Table 2 with {cfg['files']} files per method")
        run("table2", lambda: bench_table2(cfg))
    log(f"done in {time.perf_counter() - t_start:.0f} s -> {out.with_suffix('.json')}, {out.with_suffix('.md')}")


if __name__ == "__main__":
    main()
