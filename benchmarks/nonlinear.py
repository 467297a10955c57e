"""Nonlinear structure with nothing declared (issue 11): the simulated labour survey.

    .venv/bin/python benchmarks/nonlinear.py     # -> results/nonlinear.{json,md}

``mixsynth.datasets.nonlinear_survey(3000, seed)`` holds a quadratic wage-age profile, a
female x age interaction and a married share that rises and falls with age. For table and
fit seeds 0-3: the default fit (``responses: auto``, the default budget) and the copula
alone (``responses: none``), 5 files of each; per coefficient, the mean over the 5 files of
its confidence-interval overlap with the real table's fit; beside them, 5 fresh tables from
the generating model (what a synthesizer drawing from the true distribution scores). The
issue's target: CIO >= 0.5 per coefficient.

Then the default run as a new user runs it, ``mixsynth synthesize REAL --out SYN`` with no
spec, on a 6,000-row, 5-column table (the survey of seed 0 with an ``hours`` column:
40 - 4 female + N(0, 6^2), whole hours): wall time of the whole command (reading, screen,
copula, BART, synthesis, writing). The issue's target: under 2
minutes on 2 cores.
"""
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from runner import machine, parse_arguments, save_results, timed_synthesize  # noqa: E402

FORMULAS = {"wage": "np.log(wage) ~ age + I(age**2) + female + female:age + C(marital)",
            "married": "married ~ age + I(age**2)"}


def overlaps(real: pd.DataFrame, files: list) -> dict:
    from mixsynth.report.regressions import regression

    def married(frame):
        return frame.assign(married=(frame["marital"] == "married").astype(float))
    out = {}
    for key, formula in FORMULAS.items():
        rows = [{t["term"]: t["cio"] for t in regression(married(real), married(f), formula)["terms"]}
                for f in files]
        out[key] = pd.DataFrame(rows).mean().round(3).to_dict()
    return out


def recovery(seeds=range(4)) -> list:
    from mixsynth import CopulaSynthesizer, RunConfig, infer_spec
    from mixsynth.datasets import nonlinear_survey

    runs = []
    for seed in seeds:
        real = nonlinear_survey(3000, seed=seed)
        row = {"seed": seed}
        for name, responses in (("auto", "auto"), ("copula_alone", "none")):
            t0 = time.perf_counter()
            model = CopulaSynthesizer(infer_spec(real), RunConfig(responses=responses), seed=seed).fit(real)
            row[name] = {"fit_seconds": round(time.perf_counter() - t0, 1),
                         "responses": list(model.response_summary()["modelled"]),
                         "rhat_max": model.convergence_["rhat_max"],
                         "ess_bulk_min": model.convergence_["ess_bulk_min"],
                         "cio": overlaps(real, model.sample_files(5, seed=1))}
        row["true_distribution"] = {"cio": overlaps(real, [nonlinear_survey(3000, seed=100 + 10 * seed + i)
                                                           for i in range(5)])}
        runs.append(row)
        print(seed, row["auto"]["responses"], row["auto"]["cio"], flush=True)
    return runs


def default_run(max_wait: float) -> dict:
    """``mixsynth synthesize`` with defaults on the 6,000-row, 5-column table, once the machine
    is quiet (waiting up to ``max_wait`` s)."""
    from mixsynth.datasets import nonlinear_survey

    real = nonlinear_survey(6000, seed=0)
    rng = np.random.default_rng(0)
    real["hours"] = np.round(40 - 4 * real["female"] + 6 * rng.standard_normal(len(real))).astype(int)
    done = timed_synthesize(real, max_wait=max_wait)
    return {"rows": len(real), "columns": real.shape[1], "wall_seconds": round(done["wall_seconds"], 1),
            "other_cores_at_start": round(done["other_cores_at_start"], 2),
            "stdout": [line for line in done["stdout"].splitlines() if "/" not in line]}


def markdown(res: dict) -> str:
    runs = res["runs"]
    terms = [(k, t) for k in FORMULAS for t in runs[0]["auto"]["cio"][k]]
    m = res["machine"]
    lines = ["# Nonlinear structure by default (issue 11)", "", __doc__.strip().split("\n\n", 1)[1], "",
             f"{m['date']} · {m['cpu_count']} CPUs · mixsynth @ {(m['git_commit'] or '')[:7]}"
             f"{' (uncommitted changes in mixsynth/)' if m['git_uncommitted_in_mixsynth'] else ''}", "",
             "| seed | method | BART responses | max R-hat / min ESS | fit s | "
             + " | ".join(f"{k}: {t}" for k, t in terms) + " |",
             "|---|---|---|---|---|" + "---|" * len(terms)]
    for row in runs:
        for name in ("auto", "copula_alone", "true_distribution"):
            r = row[name]
            conv = f"{r['rhat_max']:.3f} / {r['ess_bulk_min']:.0f}" if "rhat_max" in r else "—"
            cells = [f"{r['cio'][k][t]:.2f}" for k, t in terms]
            lines.append(f"| {row['seed']} | {name} | {', '.join(r.get('responses', [])) or '—'} | {conv} | "
                         f"{r.get('fit_seconds', '—')} | " + " | ".join(cells) + " |")
    lows = {k: min(min(v for t, v in r["auto"]["cio"][k].items()) for r in runs) for k in FORMULAS}
    lines += ["", "Weakest term over the tables, defaults: "
              + ", ".join(f"{k} {v:.2f}" for k, v in lows.items()) + "."]
    d = res.get("default_run")
    if d:
        lines += ["", "## The default run, timed", "",
                  f"`mixsynth synthesize survey.csv --out syn.csv` ({d['rows']:,} rows x {d['columns']} columns, "
                  f"no spec): **{d['wall_seconds']} s** wall, whole command (other load at start "
                  f"{d['other_cores_at_start']} cores). What it printed (paths left out):", "", "```"]
        lines += d["stdout"] + ["```"]
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    _, out, _, max_wait = parse_arguments(argv, __doc__.split("\n")[0], "nonlinear")
    res = {"machine": machine(), "runs": recovery(), "default_run": default_run(max_wait)}
    save_results(res, out, markdown, indent=1)


if __name__ == "__main__":
    main()
