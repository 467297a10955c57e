"""Core benchmarks of mixsynth: sampler speed, a real fit, synthesis speed, the paper's Table 2.

    python benchmarks/core.py            # full run -> results/core.{json,md}
    python benchmarks/core.py --quick    # smoke run -> results/core-quick.{json,md}

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
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from runner import (Measure, keep_earlier, load_cell, log, machine, number, parse_arguments,  # noqa: E402
                    run_piece, runs_footer, rusage_kib, save_results)

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


# -- a. sweeps per second ------------------------------------------------------------------

def bench_sweeps(cfg: dict) -> dict:
    import numba
    from threadpoolctl import threadpool_limits

    from mixsynth import infer_spec
    from mixsynth.constraints import initial_latent
    from mixsynth.datasets import paper_layout
    from mixsynth.encode import latent_columns
    from mixsynth.layout import Layout
    from mixsynth.kernels.latent import LEVEL
    from mixsynth.kernels.truncnorm import seed_streams
    from mixsynth.config import Prior
    from mixsynth.sampler import NOISE_STREAMS, choose_factors, initial_state, sweep
    from mixsynth.schema import to_codes

    frame = paper_layout(n=cfg["layout_n"], seed=cfg["layout_seed"])
    spec = infer_spec(frame)
    values = to_codes(frame, spec)
    layout = Layout(spec, tuple(latent_columns(spec, values, "rpl")), ())
    columns, cons = list(layout.columns), layout.constraints(values)
    k = choose_factors(initial_latent(cons), 0.95)
    intercept = cons.kind == LEVEL
    prior = Prior()

    def run(threads: int, warmup: int, sweeps: int) -> dict:
        numba.set_num_threads(threads)
        streams = seed_streams(np.random.SeedSequence(1), len(columns))
        noise_streams = seed_streams(np.random.SeedSequence(2), NOISE_STREAMS)
        state = initial_state(cons, k, np.random.default_rng(cfg["timing_seed"]))
        rng = np.random.default_rng(3)
        with Measure() as load, threadpool_limits(1, user_api="blas"):
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
        return {"other_cores": load.other_cores, "our_cores": load.our_cores, "numba_threads": threads, "warmup_sweeps": warmup, "first_sweep_seconds": first,
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
    model = CopulaSynthesizer(infer_spec(frame), settings, seed=cfg["fit_seed"])
    with Measure(memory=True) as fit:
        model.fit(frame)
    wall, mem = fit.seconds, fit.memory
    conv = model.convergence_
    usage = rusage_kib()
    out = {
        "settings": settings.to_dict(), "method": "rpl", "seed": cfg["fit_seed"], "workers": "default",
        "p_star": len(model.columns_), "k": model.factors_,
        "wall_seconds": wall, "other_cores": fit.other_cores, "our_cores": fit.our_cores,
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
    with Measure() as load:
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
    out = {"other_cores": load.other_cores, "our_cores": load.our_cores, "rows": len(syn), "calls": len(times), "seeds": cfg["synth_seeds"][: cfg["synth_calls"]],
           "seconds_median": statistics.median(times), "seconds_each": times,
           "warmup_call_seconds": warm, "exact_share_each": exact}
    log(f"c. synthesis of {len(syn)} rows: median {out['seconds_median']:.2f} s")
    return out


# -- d. the paper's Table 2 ----------------------------------------------------------------

def bench_table2(cfg: dict) -> dict:
    from mixsynth import CopulaSynthesizer, RunConfig, SamplerSettings, infer_spec
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
        model = CopulaSynthesizer(spec, RunConfig(settings, method=method), seed=cfg["sim_fit_seed"], workers=1)
        with Measure() as load:
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
        conv = model.convergence_
        out["methods"][method] = {
            "other_cores": load.other_cores, "our_cores": load.our_cores,
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
              f"after {al['warmup_sweeps']} warm-up) | **{number(al['sweeps_per_second'], 1)}** "
              f"({number(al['sweep_ms_median'], 1)} ms/sweep median; 10,000 sweeps in "
              f"{number(al['minutes_for_10000_sweeps'], 1)} min; blocks of 50 sweeps: "
              f"{number(min(al['block_sweeps_per_second']), 1)}-{number(max(al['block_sweeps_per_second']), 1)}) | {load_cell(al)} | "
              "≥ 25 sweeps/s (10,000 sweeps under 7 min); authors' R sampler: ~2.4 sweeps/s only by "
              "freezing columns with >120 distinct values, 0.012 sweeps/s resampling every column |",
              f"| Gibbs sweeps/s, one chain, 1 numba thread ({one['timed_sweeps']} sweeps; each chain's "
              f"share of the machine in a 2-chain fit) | {number(one['sweeps_per_second'], 1)} | {load_cell(one)} | — |"]
    if b:
        s = b["settings"]
        mem = b["memory"]
        L += [f"| Fit wall time, {s['chains']} chains in parallel processes, {s['sweeps']:,} sweeps "
              f"({s['burn_in']:,} burn-in, thin {s['thin']}) | **{number(b['wall_seconds'], 1)} s** "
              f"({number(b['sweeps_per_second_per_chain_incl_startup'], 1)} sweeps/s per chain incl. start-up) | "
              f"{load_cell(b)} | — |",
              f"| Bulk ESS per second of wall time over the {b['convergence']['entries']} entries of C, "
              f"min / median | {number(b['ess_bulk_min_per_second'], 3)} / {number(b['ess_bulk_median_per_second'], 3)} "
              f"(ESS {number(b['ess_bulk_min'], 0)} / {number(b['ess_bulk_median'], 0)} of "
              f"{b['convergence']['chains'] * b['convergence']['draws_per_chain']} draws) | {load_cell(b)} | — |",
              f"| Max R-hat over the entries of C | {number(b['rhat_max'], 3)} (median {number(b['rhat_median'], 3)}; "
              f"{number(100 * b['share_rhat_below_1_01'], 1)}% below 1.01) | | < 1.01 usual |",
              f"| Peak resident memory of the fit, this process + chain processes | "
              f"{number(mem['tree_peak_rss_mib_sampled'], 0)} MiB (sampled sum; getrusage maxrss: self "
              f"{number(mem['self_maxrss_mib'], 0)} MiB, largest child {number(mem['children_maxrss_mib'], 0)} MiB) | | — |"]
    if c:
        L += [f"| Synthesize {c['rows']:,} rows (median of {c['calls']} `sample` calls) | "
              f"**{number(c['seconds_median'])} s** (first call {number(c['warmup_call_seconds'])} s) | {load_cell(c)} | < 5 s |"]
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
              f"MSE ≈ {number(d.get('mse_bootstrap_floor'), 3)} from sampling noise alone.", "",
              "| method | MSE mean | sd over files | se of mean | multiply classified | target / paper |",
              "|---|---|---|---|---|---|"]
        if r:
            L.append(f"| RPL | **{number(r['mse_mean'], 3)}** | {number(r['mse_sd_over_files'], 3)} | "
                     f"{number(r['mse_se_of_mean'], 3)} | **{number(100 * r['multiply_classified_mean'], 1)}%** | "
                     "well below RL; 0% by construction |")
        if rl:
            L.append(f"| RL | {number(rl['mse_mean'], 3)} | {number(rl['mse_sd_over_files'], 3)} | "
                     f"{number(rl['mse_se_of_mean'], 3)} | {number(100 * rl['multiply_classified_mean'], 1)}% "
                     f"({number(100 * rl['unclassified_mean'], 1)}% with no dummy on, read as the base level) | "
                     "paper's RL: MSE 2.359 (s.e. 0.763), 12.4% multiply classified |")
        L += ["", "Group means of x2 (real; average over the synthetic files):", "",
              "| x1 | " + " | ".join(str(v) for v in d["levels"]) + " |",
              "|---|" + "---|" * len(d["levels"]),
              "| real | " + " | ".join(number(v) for v in d["real_group_means"]) + " |"]
        for name, mm in d["methods"].items():
            L.append(f"| {name.upper()} | " + " | ".join(number(v) for v in mm["synthetic_group_means_avg"]) + " |")
        L += ["", "Shares of the levels of x1 (real; average over the synthetic files):", "",
              "| x1 | " + " | ".join(str(v) for v in d["levels"]) + " |",
              "|---|" + "---|" * len(d["levels"]),
              "| real | " + " | ".join(number(100 * v, 1) + "%" for v in d["real_level_shares"]) + " |"]
        for name, mm in d["methods"].items():
            L.append(f"| {name.upper()} | " + " | ".join(number(100 * v, 1) + "%" for v in mm["synthetic_level_shares_avg"]) + " |")
        L += ["", "| method | p* | k | fit | synthesis per file | R-hat max (split chain) | ESS min | other load |",
              "|---|---|---|---|---|---|---|---|"]
        for name, mm in d["methods"].items():
            L.append(f"| {name.upper()} | {mm['p_star']} | {mm['k']} | {number(mm['fit_seconds'], 1)} s | "
                     f"{number(mm['synthesis_seconds_per_file'], 3)} s | {number(mm['rhat_max'], 3)} | "
                     f"{number(mm['ess_bulk_min'], 0)} | {load_cell(mm)} |")
        L.append("")
    L += runs_footer(res)
    return "\n".join(L)


def main(argv=None) -> None:
    args, out, pieces, max_wait = parse_arguments(
        argv, __doc__.split("\n")[0], "core", ["sweeps", "fit", "table2"],
        "short chains and 50 files per method; 'fit' includes synthesis timing")
    cfg = QUICK if args.quick else FULL

    res = {"quick": args.quick, "config": cfg, "targets": TARGETS, "machine": machine(), "runs": {}}
    if args.only:   # re-running some pieces: keep the others from the existing results
        keep_earlier(res, out, ("sweeps", "fit", "synthesis", "table2"), config=cfg)
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
