"""The whole utility and disclosure-risk report of synthetic file(s) against the real one.

``build_report(real, syns, spec, holdout=None, seed=0)`` runs the measures of
``fidelity``, ``analyses``, ``regressions``, ``utility`` and ``risk`` and returns one
versioned, JSON-ready dict of aggregates only (schema ``mixsynth-report/1``; plain numbers,
strings, lists, dicts, None for undefined, never NaN and never a row of any table).

Dates, numbers written as text and rare levels are compared as the model saw them
(``schema.model_view``: days, numbers, ``other``). What is computed on which file: marginals, associations, crosstabs, group statistics, TSTR,
pMSE, DCR, attribute inference and outlier disclosure use the first synthetic file; declared
regressions are fitted to the first file ("single") and, when there are m > 1 files, also
combined over all of them ("combined", the fully synthetic combining rules of Raghunathan,
Reiter and Rubin 2003) and, when the entry asks for it, as the paper's Bayesian horseshoe
regression on the first file ("horseshoe", credible intervals); exact copies are counted in
every file, and the gradient-boosting propensity AUC is computed per file (headline: the
mean over the files; each side subsampled to at most ``utility.PROPENSITY_MAX_ROWS`` rows).
The holdout is real rows kept out of synthesis: TSTR (train on ``real`` or on the synthetic
file, test on the holdout) and the distance to closest record need it and are None, with a
line in ``notes``, without it; attribute inference then runs without its holdout reference.

The spec's ``report:`` section (``spec.extra["report"]``; every key optional)::

    report:
      crosstabs: [[sex, employed]]            # categorical pairs, cell shares side by side
      group_statistics:                        # analyses.group_statistic arguments
        - {stat: rate, column: employed, by: sex, where: "age >= 15 and age <= 64", weight: w}
        - {stat: rate, column: status, level: unemployed}   # share of one level of a text column
        - {stat: quantile, column: wage, by: [sex, region], q: 0.9}
      regressions:                             # statsmodels formulas; family ols (default) or logit
        - {formula: "np.log(wage) ~ education + experience", family: ols, standardize: true,
           where: "wage > 0",                  # optional: pandas query, rows both files keep
           bayesian: {draws: 1000, tune: 1000}}  # optional: the paper's horseshoe regression
                                                  # too (PyMC, the 'bayes' extra)
      tstr:                                    # needs a holdout; task regression (default) or
        - {target: wage, task: regression}     # classification; features default to every
                                               # other spec column
      outliers: [{public: NDI_Birth, sensitive: ReadScal1, k: 50}]
      anonymeter: {n_attacks: 500}             # singling-out, linkability, inference risk
                                               # (needs a holdout and the anonymeter environment)
      drop_flag: 0.1                           # Cramer's V drop that flags a pair
      min_cell: 10                             # real cells, bins and groups with fewer rows
                                               # are not shown (small-cell rule)

Quasi-identifier and sensitive columns come from the column roles of the spec (``role:``
under ``columns:``). The ``release:`` section is read by ``mixsynth.report.release.decide``.

``report["seconds"]`` holds the wall time of the whole report and of its optional extras
(``horseshoe``, ``anonymeter``). ``report["headline"]`` holds one number (or None) per name in ``HEADLINE_MEASURES``: the
values release rules are checked against.
"""
from __future__ import annotations

import math
import re
import time

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from ..schema import TableSpec, model_view
from ..tableio import InputError, did_you_mean
from . import analyses, fidelity, risk, utility
from .measures import HEADLINE_MEASURES
from .regressions import regression, regression_combined
from .anonymeter import ENV as ANONYMETER_ENV, anonymeter_python, anonymeter_risks

SCHEMA = "mixsynth-report/1"

_REPORT_KEYS = ("crosstabs", "group_statistics", "regressions", "tstr", "outliers", "drop_flag", "min_cell",
                "anonymeter")
_ANONYMETER_KEYS = ("n_attacks",)
_GROUP_KEYS = ("stat", "column", "by", "where", "weight", "q", "level")
_REGRESSION_KEYS = ("formula", "family", "standardize", "where", "bayesian")
_BAYES_KEYS = ("draws", "tune", "chains")
_TSTR_KEYS = ("target", "task", "features")
_OUTLIER_KEYS = ("public", "sensitive", "k")
TARGET_ANALYSES = {"crosstabs": "cross-tabulations", "group_statistics": "group statistics",
                   "regressions": "regressions (confidence-interval overlap)",
                   "tstr": "train-on-synthetic/test-on-real", "outliers": "outlier disclosure"}


def analyses_not_declared(spec: TableSpec) -> list[str]:
    """The target analyses the spec's ``report:`` section does not declare (what a spec would add)."""
    cfg = report_section(spec)
    return [label for key, label in TARGET_ANALYSES.items() if not cfg[key]]


def build_report(real: pd.DataFrame, syns: list[pd.DataFrame], spec: TableSpec,
                 holdout: pd.DataFrame | None = None, seed: int = 0, convergence: dict | None = None,
                 responses: dict | None = None) -> dict:
    """The report dict (module docstring) of synthetic tables ``syns`` (m >= 1) against ``real``.
    ``convergence`` is the fitted model's ``convergence_`` (R-hat and ESS of the copula
    correlations), kept as ``report["convergence"]`` and headline ``max_rhat``,
    ``min_ess_bulk`` so release rules can require converged chains; None without a model.
    ``responses`` is the model's ``response_summary()`` (which columns BART modelled and
    why), kept as ``report["responses"]``.

    Runs with one OpenMP/BLAS thread: the gradient-boosting fits spin their threads, and on a
    machine whose cores are busy (another run, chains) that made the report many times slower.
    """
    with threadpool_limits(1):
        return _build_report(real, syns, spec, holdout, seed, convergence, responses)


def _build_report(real, syns, spec, holdout, seed, convergence, responses) -> dict:
    if isinstance(syns, pd.DataFrame):
        syns = [syns]
    if not syns:
        raise InputError("build_report needs at least one synthetic table")
    cfg = report_section(spec)
    names = spec.names
    for label, frame in [("real", real)] + [(f"synthetic file {i + 1}", s) for i, s in enumerate(syns)] + \
            ([("holdout", holdout)] if holdout is not None else []):
        missing = [n for n in names if n not in frame.columns]
        if missing:
            raise InputError(f"the {label} table lacks spec column(s) {', '.join(missing)}; "
                             f"supply a table with the same columns as the real file")
    real, syns = model_view(real, spec), [model_view(s, spec) for s in syns]
    holdout = None if holdout is None else model_view(holdout, spec)
    syn = syns[0]
    notes = [f"input: {n}" for n in spec.notes]
    undeclared = analyses_not_declared(spec)
    if undeclared:
        notes.append("target analyses: declare them under `report:` in a spec to add "
                     + ", ".join(undeclared))
    started = time.perf_counter()
    seconds = {"horseshoe": 0.0, "anonymeter": 0.0}
    assoc = fidelity.associations(real, syn, spec, drop_flag=cfg["drop_flag"])

    group_stats = [{**g, "results": analyses.group_statistic(real, syn, **g, min_cell=cfg["min_cell"])}
                   for g in cfg["group_statistics"]]

    regressions = []
    for r in cfg["regressions"]:
        r_real, r_syns = ((real.query(r["where"]), [s.query(r["where"]) for s in syns]) if r["where"]
                          else (real, syns))
        single = regression(r_real, r_syns[0], r["formula"], r["family"], r["standardize"])
        combined = (regression_combined(r_real, r_syns, r["formula"], r["family"], r["standardize"])
                    if len(syns) > 1 else None)
        t0 = time.perf_counter()
        bayes = (regression(r_real, r_syns[0], r["formula"], r["family"], r["standardize"],
                            bayesian={**r["bayesian"], "seed": seed})
                 if r["bayesian"] is not None else None)
        seconds["horseshoe"] += time.perf_counter() - t0
        regressions.append({**r, "single": single, "combined": combined, "horseshoe": bayes})

    if holdout is None:
        tstr = None
        dcr = None
        if cfg["tstr"]:
            notes.append("tstr: not computed, it needs a holdout (real rows kept out of synthesis)")
        notes.append("risk.dcr: not computed, it needs a holdout (real rows kept out of synthesis)")
    else:
        tstr = [utility.tstr(real, holdout, syn, t["target"], t["features"], t["task"], seed=seed)
                for t in cfg["tstr"]]
        dcr = risk.distance_to_closest_record(real[names], holdout[names], syn[names], spec, seed=seed)

    quasi = [c.name for c in spec.by_role("quasi_identifier")]
    copies = [risk.exact_copies(real[names], s[names], quasi or None) for s in syns]
    inference = risk.attribute_inference(real, syn, spec, seed=seed, holdout=holdout)
    if not inference:
        notes.append("risk.attribute_inference: the spec declares no quasi-identifier or no sensitive column")
    outliers = [risk.outlier_disclosure(real, syn, o["public"], o["sensitive"], o["k"]) for o in cfg["outliers"]]
    t0 = time.perf_counter()
    attacks = _anonymeter(real, syn, holdout, spec, cfg["anonymeter"], seed, notes)
    seconds["anonymeter"] = time.perf_counter() - t0

    report = {
        "schema": SCHEMA,
        "rows": {"real": int(len(real)), "synthetic": [int(len(s)) for s in syns], "m": len(syns),
                 "holdout": None if holdout is None else int(len(holdout))},
        "columns": names,
        "roles": {"quasi_identifier": quasi, "sensitive": [c.name for c in spec.by_role("sensitive")]},
        "marginals": fidelity.marginals(real, syn, spec),
        "associations": assoc,
        "distributions": fidelity.distributions(real, syn, spec, min_cell=cfg["min_cell"]),
        "crosstabs": [fidelity.crosstab(real, syn, a, b, cfg["min_cell"]) for a, b in cfg["crosstabs"]],
        "group_statistics": group_stats,
        "regressions": regressions,
        "tstr": tstr,
        "pmse": utility.pmse(real[names], syn[names], seed=seed),
        "propensity": utility.propensity_auc(real[names], [s[names] for s in syns], seed=seed),
        "risk": {"exact_copies": copies[0], "exact_copies_per_file": copies, "dcr": dcr,
                 "attribute_inference": inference, "outlier_disclosure": outliers, "anonymeter": attacks},
        "convergence": convergence,
        "responses": responses,
        "notes": notes,
    }
    if convergence is None:
        notes.append("convergence: not given (report from files only; pass the model to include it)")
    elif convergence.get("rows", len(real)) < len(real):
        notes.append(f"convergence: the copula was fitted on a sample of {convergence['rows']:,} of the "
                     f"{len(real):,} rows (sampler.rows); the marginals and BART's responses on every row")
    if (convergence or {}).get("stopped_by_time_budget"):
        notes.append(f"convergence: {convergence['stopped_by_time_budget']} chain(s) stopped at the time "
                     "budget (sampler.minutes) before their own check passed")
    report["headline"] = _headline(report)
    report["headline_meaning"] = dict(HEADLINE_MEASURES)
    seconds["total"] = time.perf_counter() - started
    report["seconds"] = {k: round(v, 2) for k, v in seconds.items()}
    return _jsonable(report)


def report_section(spec: TableSpec) -> dict:
    """The validated ``report:`` section with defaults filled in (InputError naming a bad entry)."""
    raw = spec.extra.get("report") or {}
    if not isinstance(raw, dict):
        raise InputError("the `report` section must be a mapping; see mixsynth.report.build for its keys")
    _unknown(raw, _REPORT_KEYS, "report")
    names = spec.names

    def column(name, where):
        if name in spec.blanked:
            raise InputError(f"report.{where}: column '{name}' is released blank (too few values to "
                             f"release); drop it from the report")
        if not isinstance(name, str) or name not in names:
            raise InputError(f"report.{where}: '{name}' is not a modelled column"
                             f"{did_you_mean(name, names)}; fix the name in the spec")
        return name

    def entries(key, required, allowed):
        items = raw.get(key) or []
        if not isinstance(items, list):
            raise InputError(f"report.{key} must be a list; see mixsynth.report.build for its format")
        for i, item in enumerate(items):
            if not isinstance(item, dict) or any(k not in item for k in required):
                raise InputError(f"report.{key}[{i}] must be a mapping with key(s) {', '.join(required)}")
            _unknown(item, allowed, f"report.{key}[{i}]")
        return items

    crosstabs = []
    for i, pair in enumerate(raw.get("crosstabs") or []):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise InputError(f"report.crosstabs[{i}] must be a pair of column names, e.g. [sex, employed]")
        crosstabs.append([column(p, f"crosstabs[{i}]") for p in pair])

    groups = []
    for i, g in enumerate(entries("group_statistics", ("stat", "column"), _GROUP_KEYS)):
        if g["stat"] not in ("rate", "mean", "median", "quantile"):
            raise InputError(f"report.group_statistics[{i}]: unknown stat '{g['stat']}'; "
                             f"use rate, mean, median or quantile")
        by = g.get("by")
        by = [] if by is None else [by] if isinstance(by, str) else list(by)
        weight = g.get("weight")
        if weight is not None and weight not in names:
            raise InputError(f"report.group_statistics[{i}]: weight column '{weight}' is not a modelled column")
        groups.append({"stat": g["stat"], "column": column(g["column"], f"group_statistics[{i}]"),
                       "by": [column(b, f"group_statistics[{i}].by") for b in by] or None,
                       "where": g.get("where"), "weight": weight, "q": float(g.get("q", 0.5)),
                       "level": g.get("level")})

    regressions = []
    for i, r in enumerate(entries("regressions", ("formula",), _REGRESSION_KEYS)):
        family = r.get("family", "ols")
        if family not in ("ols", "logit"):
            raise InputError(f"report.regressions[{i}]: unknown family '{family}'; use ols or logit")
        blank = [b for b in spec.blanked if re.search(rf"\b{re.escape(b)}\b", str(r["formula"]))]
        if blank:
            column(blank[0], f"regressions[{i}]")   # refused: released blank
        regressions.append({"formula": str(r["formula"]), "family": family,
                            "standardize": bool(r.get("standardize", True)), "where": r.get("where"),
                            "bayesian": _switch(r.get("bayesian"), _BAYES_KEYS, f"regressions[{i}].bayesian")})

    tstr = []
    for i, t in enumerate(entries("tstr", ("target",), _TSTR_KEYS)):
        target = column(t["target"], f"tstr[{i}]")
        task = t.get("task", "regression")
        if task not in ("regression", "classification"):
            raise InputError(f"report.tstr[{i}]: unknown task '{task}'; use regression or classification")
        features = t.get("features") or [n for n in names if n != target]
        tstr.append({"target": target, "task": task,
                     "features": [column(f, f"tstr[{i}].features") for f in features]})

    outliers = [{"public": column(o["public"], f"outliers[{i}]"),
                 "sensitive": column(o["sensitive"], f"outliers[{i}]"), "k": int(o.get("k", 50))}
                for i, o in enumerate(entries("outliers", ("public", "sensitive"), _OUTLIER_KEYS))]

    drop_flag = raw.get("drop_flag", 0.1)
    if not isinstance(drop_flag, (int, float)) or isinstance(drop_flag, bool):
        raise InputError("report.drop_flag must be a number such as 0.1")
    min_cell = raw.get("min_cell", fidelity.MIN_CELL)
    if not isinstance(min_cell, int) or isinstance(min_cell, bool) or min_cell < 1:
        raise InputError("report.min_cell must be a whole number of rows such as 10")
    attacks = _switch(raw.get("anonymeter"), _ANONYMETER_KEYS, "anonymeter")
    return {"crosstabs": crosstabs, "group_statistics": groups, "regressions": regressions,
            "tstr": tstr, "outliers": outliers, "drop_flag": float(drop_flag), "min_cell": min_cell,
            "anonymeter": attacks}


def _unknown(d: dict, allowed, where: str):
    unknown = [k for k in d if k not in allowed]
    if unknown:
        raise InputError(f"spec: unknown key(s) under {where}: {', '.join(map(str, unknown))}; "
                         f"allowed: {', '.join(allowed)}")


def _switch(value, keys: tuple[str, ...], where: str) -> dict | None:
    """An optional extra of the report section: absent or false -> None (off), true -> {}
    (defaults), or a mapping of ``keys`` to positive whole numbers (InputError otherwise)."""
    if value is None or value is False:
        return None
    value = {} if value is True else value
    if not isinstance(value, dict) or set(value) - set(keys) or not all(
            isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value.values()):
        raise InputError(f"report.{where}: give true or a mapping of positive whole numbers with keys "
                         f"among {list(keys)}, e.g. {{{keys[0]}: 500}}")
    return value


def _anonymeter(real, syn, holdout, spec, cfg, seed, notes) -> dict | None:
    """The anonymeter attacks when the report section asks for them and they can run; else
    None with a line in notes saying why."""
    if cfg is None:
        return None
    python = anonymeter_python()
    if holdout is None or python is None:
        notes.append("risk.anonymeter: not run; it needs " + (
            "a holdout (real rows kept out of synthesis)" if holdout is None else
            f"the anonymeter environment (make anonymeter-env, or set {ANONYMETER_ENV})"))
        return None
    try:
        return anonymeter_risks(real, syn, holdout, spec, python, cfg.get("n_attacks", 500), seed)
    except RuntimeError as exc:
        notes.append(f"risk.anonymeter: {exc}")
        return None


def _headline(report: dict) -> dict:
    """One number (or None) per HEADLINE_MEASURES name."""
    reg = report["regressions"][0] if report["regressions"] else None
    fit = None if reg is None else (reg["combined"] or reg["single"])
    summary = report["associations"]["summary"]
    risk_ = report["risk"]
    quasi = risk_["exact_copies"]["quasi_identifiers"]
    lifts = [a["lift"] for a in risk_["attribute_inference"] if a["lift"] is not None]
    tstr_diffs = [t["difference"] for t in report["tstr"] or [] if t["difference"] is not None]
    outlier_r2 = [o[end].get("r2") for o in risk_["outlier_disclosure"] for end in ("low", "high")]
    outlier_r2 = [r for r in outlier_r2 if r is not None]
    dcr = risk_["dcr"]
    attacks = risk_["anonymeter"]
    return {
        "mean_cio": None if fit is None else fit["mean_cio"],
        "mean_std_sq_diff": None if fit is None else fit["mean_std_sq_diff"],
        "max_cramers_v_drop": summary["max_v_drop"],
        "n_flagged_pairs": summary["n_flagged"],
        "drift_score": report["associations"]["drift"]["score"],
        "exact_copies": sum(c["all_columns"]["count"] for c in risk_["exact_copies_per_file"]),
        "exact_copies_unique_quasi": None if quasi is None else quasi["count_matching_unique_real"],
        "max_attribute_lift": max(lifts) if lifts else None,
        "pmse_ratio": report["pmse"]["ratio"],
        "propensity_auc": report["propensity"]["auc"],
        "dcr_share_below_holdout_q05": None if dcr is None else dcr["share_synthetic_below_holdout_q05"],
        "min_tstr_difference": min(tstr_diffs) if tstr_diffs else None,
        "max_outlier_r2": max(outlier_r2) if outlier_r2 else None,
        "max_rhat": (report["convergence"] or {}).get("rhat_max"),
        "min_ess_bulk": (report["convergence"] or {}).get("ess_bulk_min"),
        "chains_stopped_by_time_budget": report["convergence"] and report["convergence"].get(
            "stopped_by_time_budget", 0),   # a model fitted before the budget existed: none was
        "anonymeter_singling_out": attacks and attacks["singling_out"]["risk"],
        "anonymeter_linkability": attacks and (attacks.get("linkability") or {}).get("risk"),
        "anonymeter_max_inference": attacks and max((a["risk"] for a in attacks["inference"]), default=None),
    }


def _jsonable(x):
    """Plain Python containers and scalars; non-finite floats become None."""
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if x is None or isinstance(x, (bool, int, str)):
        return x
    return str(x)
