"""What one BART response costs, for the fit's printed estimate (issue 34).

    .venv/bin/python benchmarks/bart_cost.py     # -> results/bart_cost.{json,md}

One response fitted with the product's BART defaults (``BartSettings()``) on a table of n rows,
u numeric features and v one-hot 0/1 features (of categoricals of 5 levels), the response a
nonlinear function of three of them plus noise, for each n in ROWS and (u, v) in FEATURES,
as a probit (a binary response, or one part of a categorical's continuation ratio) and under
the rank likelihood (a count or continuous response: it adds the error variance's forest).
One process, no other load of ours. The per-kind fit (least squares of the relative error) of
seconds = a + b n + c n u + d n v over the grid gives the constants of
``guards.bart_seconds``: a grow-from-root sweep tries up to 100 cutpoints of a number and
one of a 0/1 feature, so the two kinds of feature cost differently.
"""
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from runner import machine, parse_arguments, save_results  # noqa: E402

ROWS = (4_000, 16_000)
FEATURES = ((10, 0), (10, 150), (160, 0))   # (numeric, one-hot)


def table(n: int, nums: int, onehot: int, seed: int):
    """(X (n, nums + onehot), its Design, continuous response (n,)): ``nums`` standard normal
    numbers, ``onehot`` one-hot features of onehot / 5 categoricals of 5 levels."""
    from mixsynth.responses.design import Design
    rng = np.random.default_rng(seed)
    cats = onehot // 5
    values = {f"c{j}": rng.integers(0, 5, n).astype(float) for j in range(cats)}
    values |= {f"x{j}": rng.standard_normal(n) for j in range(nums)}
    design = Design.from_values(values, list(values), {f"c{j}": 5 for j in range(cats)})
    X = design.matrix(values)
    hit = (values["c0"] == 2) if cats else (values["x3"] > 0)
    y = np.sin(values["x0"]) + values["x1"] * hit + 0.5 * values["x2"] + rng.standard_normal(n)
    return X, design, y


def fit_seconds(n: int, nums: int, onehot: int, probit: bool) -> float:
    from mixsynth.responses.bart import BartSettings, fit_response
    X, design, y = table(n, nums, onehot, seed=n + nums + onehot)
    if probit:
        y = (y > np.median(y)).astype(float)
    t0 = time.perf_counter()
    fit_response("y", y, X, design, BartSettings(), np.random.SeedSequence(0), probit=probit)
    return time.perf_counter() - t0


def least_squares(points: list[dict]) -> dict:
    """(a, b, c, d) of seconds = a + b n + c n u + d n v over ``points``, least squares of the
    relative error (the estimate is read as a ratio), and the range of the ratio of fit to
    measured."""
    A = np.array([[1.0, p["rows"], p["rows"] * p["numeric"], p["rows"] * p["onehot"]] for p in points])
    s = np.array([p["seconds"] for p in points])
    coef = np.linalg.lstsq(A / s[:, None], np.ones(s.size), rcond=None)[0]
    ratio = (A @ coef) / s
    return {"a": float(coef[0]), "b": float(coef[1]), "c": float(coef[2]), "d": float(coef[3]),
            "fit_over_measured_min": float(ratio.min()), "fit_over_measured_max": float(ratio.max())}


def markdown(res: dict) -> str:
    m = res["machine"]
    lines = ["# What one BART response costs (issue 34)", "", __doc__.strip().split("\n\n", 1)[1], "",
             f"{m['date']} · {m['cpu_count']} CPUs · mixsynth @ {(m['git_commit'] or '')[:7]}", "",
             "| kind | rows | numeric | one-hot | seconds |", "|---|---|---|---|---|"]
    for kind in ("probit", "rank"):
        lines += [f"| {kind} | {p['rows']:,} | {p['numeric']} | {p['onehot']} | {p['seconds']:.1f} |"
                  for p in res[kind]]
    lines.append("")
    for kind in ("probit", "rank"):
        f = res["fit"][kind]
        lines.append(f"- {kind}: seconds = {f['a']:.2f} + {f['b']:.3g} n + {f['c']:.3g} n u + {f['d']:.3g} n v "
                     f"(fit / measured {f['fit_over_measured_min']:.2f}-{f['fit_over_measured_max']:.2f})")
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    _, out, _, _ = parse_arguments(argv, __doc__.split("\n")[0], "bart_cost", waits=False)
    res = {"machine": machine()}
    for kind in ("probit", "rank"):
        res[kind] = []
        for n in ROWS:
            for u, v in FEATURES:
                res[kind].append({"rows": n, "numeric": u, "onehot": v,
                                  "seconds": round(fit_seconds(n, u, v, kind == "probit"), 2)})
                print(kind, res[kind][-1], flush=True)
    res["fit"] = {kind: least_squares(res[kind]) for kind in ("probit", "rank")}
    save_results(res, out, markdown, indent=1)
    print(markdown(res), end="")


if __name__ == "__main__":
    main()
