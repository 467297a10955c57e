"""Anonymeter's three attacks (Giomi et al., PETS 2023), run INSIDE a separate environment
that has the anonymeter package (it needs numpy < 1.27, which the product cannot have).

This file imports nothing from mixsynth: `mixsynth.report.anonymeter` runs it as
``PYTHON anonymeter_attacks.py CONFIG.json`` and reads one JSON document from stdout:
for each attack, the risk with its 95% interval and the success rates of the main attack,
the control attack (on held-out real rows) and the random baseline. Only rates leave this
process; anonymeter's singling-out queries quote real values and are never printed.

CONFIG.json: {"ori": CSV (training rows), "syn": CSV, "control": CSV (holdout),
"quasi": [columns], "sensitive": {column: true if numeric}, "n_attacks": int, "seed": int}.
"""
import json
import sys
import warnings

import numpy as np
import pandas as pd


def _rates(evaluator) -> dict:
    risk = evaluator.risk(confidence_level=0.95)
    res = evaluator.results(confidence_level=0.95)
    rate = lambda r: None if r is None else {"value": float(r.value), "error": float(r.error)}
    return {"risk": float(risk.value), "risk_ci95": [float(risk.ci[0]), float(risk.ci[1])],
            "attack_rate": rate(res.attack_rate), "baseline_rate": rate(res.baseline_rate),
            "control_rate": rate(res.control_rate), "n_attacks": int(res.n_attacks_ori),
            # anonymeter's own caveat: an attack no better than random guessing says nothing
            "informative": bool(res.attack_rate.value > res.baseline_rate.value)}


def main(path: str) -> None:
    from anonymeter.evaluators import InferenceEvaluator, LinkabilityEvaluator, SinglingOutEvaluator

    cfg = json.loads(open(path, encoding="utf-8").read())
    ori, syn, control = (pd.read_csv(cfg[k]) for k in ("ori", "syn", "control"))
    n = int(min(cfg["n_attacks"], len(control), len(ori)))
    np.random.seed(cfg["seed"])  # pandas' sample() in the attacks draws from the global state
    out = {"n_attacks": n}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        so = SinglingOutEvaluator(ori, syn, n_attacks=n, control=control, seed=cfg["seed"])
        out["singling_out"] = _rates(so.evaluate(mode="univariate"))
        quasi = [c for c in cfg["quasi"] if c in ori.columns]
        rest = [c for c in ori.columns if c not in quasi]
        if quasi and rest:
            link = LinkabilityEvaluator(ori, syn, aux_cols=(quasi, rest), n_attacks=n,
                                        n_neighbors=1, control=control)
            out["linkability"] = {**_rates(link.evaluate(n_jobs=1)), "aux_cols": [quasi, rest]}
        out["inference"] = []
        for secret, numeric in cfg["sensitive"].items():
            if not quasi:
                break
            inf = InferenceEvaluator(ori, syn, aux_cols=quasi, secret=secret, regression=bool(numeric),
                                     n_attacks=n, control=control)
            out["inference"].append({"column": secret, **_rates(inf.evaluate(n_jobs=1))})
    sys.stdout.write(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])
