"""Nonlinear structure with nothing declared (issue 11): the simulated labour survey.

    .venv/bin/python benchmarks/nonlinear.py     # ~3 min -> results/nonlinear.{json,md}

``mixsynth.datasets.nonlinear_survey(3000, seed)`` holds a quadratic wage-age profile, a
female x age interaction and a married share that rises and falls with age. For table and
fit seeds 0-3: the default fit (``responses: auto``) and the copula alone
(``responses: none``), a short budget (1,000 sweeps, as tests/test_screen.py), 5 files of
each; per coefficient, the mean over the 5 files of its confidence-interval overlap with the
real table's fit; beside them, 5 fresh tables from the generating model (what a synthesizer
drawing from the true distribution scores). The issue's target: CIO >= 0.5 per coefficient.
"""
import json
import sys
import time
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
from core import machine  # noqa: E402

FORMULAS = {"wage": "np.log(wage) ~ age + I(age**2) + female + female:age + C(marital)",
            "married": "married ~ age + I(age**2)"}


def main() -> None:
    from mixsynth import CopulaSynthesizer, SamplerSettings, infer_spec
    from mixsynth.datasets import nonlinear_survey
    from mixsynth.report.analyses import regression

    settings = SamplerSettings(sweeps=1000, burn_in=500, thin=2)

    def overlaps(real, files):
        real = real.assign(married=(real["marital"] == "married").astype(float))
        out = {}
        for key, formula in FORMULAS.items():
            rows = [{t["term"]: t["cio"] for t in regression(
                real, f.assign(married=(f["marital"] == "married").astype(float)), formula)["terms"]} for f in files]
            out[key] = pd.DataFrame(rows).mean().round(3).to_dict()
        return out

    runs = []
    for seed in range(4):
        real = nonlinear_survey(3000, seed=seed)
        row = {"seed": seed}
        for name, responses in (("auto", "auto"), ("copula_alone", "none")):
            t0 = time.perf_counter()
            model = CopulaSynthesizer(infer_spec(real, {"responses": responses}), settings, seed=seed).fit(real)
            row[name] = {"fit_seconds": round(time.perf_counter() - t0, 1),
                         "responses": list(model.spec_.responses),
                         "rhat_max": model.convergence_["rhat_max"],
                         "ess_bulk_min": model.convergence_["ess_bulk_min"],
                         "cio": overlaps(real, model.sample_many(5, seed=1))}
        row["true_distribution"] = {"cio": overlaps(real, [nonlinear_survey(3000, seed=100 + 10 * seed + i)
                                                           for i in range(5)])}
        runs.append(row)
        print(seed, row["auto"]["responses"], row["auto"]["cio"], flush=True)
    out = HERE / "results" / "nonlinear"
    res = {"machine": machine(), "settings": settings.to_dict(), "runs": runs}
    out.with_suffix(".json").write_text(json.dumps(res, indent=1, default=float) + "\n")
    lines = ["# Nonlinear structure by default (issue 11)", "", __doc__.strip().split("\n\n", 1)[1], "",
             "| seed | method | responses | max R-hat / min ESS | " + " | ".join(
                 f"{k}: {t}" for k in FORMULAS for t in runs[0]["auto"]["cio"][k]) + " |",
             "|---|---|---|---|" + "---|" * sum(len(runs[0]["auto"]["cio"][k]) for k in FORMULAS)]
    for row in runs:
        for name in ("auto", "copula_alone", "true_distribution"):
            r = row[name]
            conv = f"{r['rhat_max']:.3f} / {r['ess_bulk_min']:.0f}" if "rhat_max" in r else "—"
            cells = [f"{r['cio'][k][t]:.2f}" for k in FORMULAS for t in runs[0]["auto"]["cio"][k]]
            lines.append(f"| {row['seed']} | {name} | {', '.join(r.get('responses', [])) or '—'} | {conv} | "
                         + " | ".join(cells) + " |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
