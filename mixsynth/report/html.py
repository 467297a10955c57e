"""The report as one self-contained HTML page for a methodologist: the decision first, then
each level of evidence with its plots (PNG, inlined, from plots.py) and what each number means.

``render_html(report, decision)`` reads only the report dict (aggregates, already subject to
the small-cell rule) and the decision dict; it never sees a table.
"""
from __future__ import annotations

from .markup import ci, esc, label, num, para, share, table, yes
from .plots import association_figure, association_matrices, coefficient_figure, distribution_figure, inline_png

_CSS = """
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
h1{margin-bottom:.2em} h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:.5em 0 1em;font-size:.9em}
th,td{border:1px solid #ddd;padding:.25em .5em;text-align:right} th{background:#f4f4f4}
td.l,th.l{text-align:left} .pass{color:#1a7f37} .fail{color:#b42318;font-weight:bold}
.limit{color:#9a6700} .banner{padding:.8em 1em;border-radius:6px;font-size:1.2em;margin:1em 0}
.release{background:#e6f4ea} .reject{background:#fde7e7} .note{color:#555;font-size:.9em}
img{max-width:100%}
"""


def render_html(report: dict, decision: dict | None) -> str:
    """The whole page (str). Sections: decision, headline, the model's BART responses,
    marginals, associations, crosstabs, target analyses, general utility, disclosure risk,
    notes."""
    rows = report["rows"]
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>mixsynth report</title>"
             f"<style>{_CSS}</style></head><body><h1>Synthetic data report</h1>",
             para(f"{rows['real']:,} real rows compared with {rows['m']} synthetic file(s) of "
                  f"{', '.join(f'{n:,}' for n in rows['synthetic'])} rows; holdout of real rows kept "
                  f"out of synthesis: {'none' if rows['holdout'] is None else format(rows['holdout'], ',')}. "
                  f"Schema {report['schema']}. Every figure below is an aggregate; real cells, bins "
                  f"and groups with fewer rows than the small-cell threshold are not shown.", "note")]
    parts += [_decision(decision), _headline(report), _responses(report), _marginals(report), _associations(report),
              _crosstabs(report), _targets(report), _general(report), _risk(report)]
    if report["notes"]:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{esc(n)}</li>" for n in report["notes"]) + "</ul>")
    return "\n".join(parts) + "</body></html>\n"


# ---------------------------------------------------------------- sections

def _decision(decision: dict | None) -> str:
    if decision is None:
        return "<h2>Decision</h2>" + para("The spec has no <code>release:</code> section, so no decision was taken.")
    verdict = decision["decision"]
    out = [f"<div class='banner {verdict}'>Decision: <b>{esc(verdict)}</b></div>"]
    if decision.get("intended_uses"):
        out.append(para(f"Intended uses: {esc(decision['intended_uses'])}"))
    body = []
    for r in decision["rules"]:
        if r["passed"]:
            result = "<span class='pass'>pass</span>"
        elif r["passes_with_limitation"]:
            result = "<span class='limit'>fails; released with the stated limitation</span>"
        else:
            result = "<span class='fail'>FAIL</span>"
        body.append([esc(r["measure"]), num(r["value"]), esc(r["threshold"]), result, esc(r["reason"])])
    out.append(table(["rule", "value", "threshold", "result", "why"], body, left=(0, 3, 4)))
    if decision["limitations"]:
        out.append("<p>Limitations to publish with the file:</p><ul>"
                   + "".join(f"<li>{esc(t)}</li>" for t in decision["limitations"]) + "</ul>")
    return "<h2>Release decision</h2>" + "".join(out)


def _headline(report: dict) -> str:
    body = [[esc(k), num(v), esc(report["headline_meaning"].get(k, ""))] for k, v in report["headline"].items()]
    return "<h2>Headline measures</h2>" + table(["measure", "value", "meaning"], body, left=(0, 2))


def _responses(report: dict) -> str:
    """Which columns BART modelled after the copula, and the screen's scores."""
    r = report.get("responses")
    if not r:
        return ""
    out = ["<h2>Columns modelled by BART</h2>", para(
        "A Gaussian copula carries monotone dependence only. Columns whose relation to the others "
        "it cannot follow are modelled by BART after it (rank likelihood; probit for a 0/1 column). "
        + esc(r["summary"]) + ".")]
    if r.get("derived"):
        out.append(para("Columns that are a function of another column in the real file (a recode, a value "
                        "per area) are not modelled: each synthetic row looks them up from its source, so "
                        "the link holds exactly: " + esc("; ".join(r["derived"])) + "."))
    if r.get("refined"):
        out.append(para("Ordered columns that determine a categorical the copula models are kept within it: "
                        "where a synthetic row's value falls in another level, it is drawn again from the real "
                        "rows of its level: " + esc("; ".join(r["refined"])) + "."))
    screen = r.get("screen")
    if screen:
        out.append(para(f"The screen (on {screen['rows']:,} rows, {screen['rule']['folds']}-fold): out-of-fold "
                        f"R² of a linear model on the other columns' normal scores, and what gradient boosting "
                        f"adds to it; a gain of at least {screen['rule']['min_gain']} with z at least "
                        f"{screen['rule']['min_z']} makes a column a response (at most "
                        f"{screen['rule']['max_screened']}), and the outcomes of declared regressions always are."))
        out.append(table(["column", "kind", "linear R²", "gain", "z", "BART", "why"],
                         [[esc(c["name"]), esc(c["kind"]), num(c["linear_r2"]), num(c["gain"]), num(c["z"]),
                           yes(c["chosen"]), esc(c["reason"])] for c in screen["scores"]], left=(0, 1, 6)))
    return "".join(out)


def _marginals(report: dict) -> str:
    body = [[esc(m["column"]), esc(m["treated_as"]), num(m["tvd"]), num(m["ks"]), num(m["wasserstein_scaled"]),
             num(m["median_shift"]), num(m["iqr_shift"]), num(m["missing_diff_pp"])]
            for m in report["marginals"]]
    out = ["<h2>Level 1: marginal distributions</h2>",
           para("TVD: total variation distance of the category shares (0 same, 1 disjoint; missing is "
                "a category). KS: largest gap between the two distribution functions. Wasserstein is "
                "scaled by the real interquartile range. Shifts are relative (synthetic - real) / real. "
                "Missing: synthetic minus real missing rate in percentage points."),
           table(["column", "treated as", "TVD", "KS", "Wasserstein / IQR", "median shift",
                  "IQR shift", "missing (pp)"], body, left=(0, 1))]
    dists = report.get("distributions") or []
    for start in range(0, len(dists), 24):
        out.append(inline_png(distribution_figure(dists[start:start + 24])))
    return "".join(out)


def _associations(report: dict) -> str:
    a = report["associations"]
    s, drift = a["summary"], a["drift"]
    out = ["<h2>Level 2: associations</h2>",
           para(f"Cramer's V for categorical pairs (a drop over {s['drop_flag']:g} is flagged: "
                f"{s['n_flagged']} flagged; largest drop {num(s['max_v_drop'])} for "
                f"{esc(' x '.join(s['max_v_drop_pair'] or []))}), Pearson and Spearman correlation for "
                f"numeric pairs (largest change {num(s['max_abs_pearson_change'])}), and the "
                f"correlation ratio eta for categorical x numeric pairs. Correlation drift score "
                f"(Frobenius norm of the difference of the correlation matrices over "
                f"{drift['n_encoded_columns']} encoded columns): {num(drift['score'])}; the article's "
                f"rule of thumb looks above {drift['threshold']:g}.")]
    names, real, syn = association_matrices(a)
    if len(names) >= 2:
        out.append(inline_png(association_figure(names, real, syn)))
    flagged = [p for p in a["categorical_pairs"] if p["flag"]]
    worst = sorted((p for p in a["categorical_pairs"] if p["drop"] is not None),
                   key=lambda p: -p["drop"])[:10]
    if worst:
        out.append("<p>Categorical pairs with the largest fall of Cramer's V:</p>")
        out.append(table(["pair", "V real", "V synthetic", "drop", "flag"],
                         [[esc(f"{p['a']} x {p['b']}"), num(p["v_real"]), num(p["v_synthetic"]),
                           num(p["drop"]), "<span class='fail'>flag</span>" if p["flag"] else ""]
                          for p in worst], left=(0,)))
    if not flagged:
        out.append(para("No categorical pair lost more than the flagged amount of association."))
    return "".join(out)


def _crosstabs(report: dict) -> str:
    if not report["crosstabs"]:
        return ""
    out = ["<h2>Declared cross-tabulations</h2>",
           para("Cell shares of all rows, real beside synthetic (real cells under the small-cell "
                "threshold shown as 'suppressed').")]
    for t in report["crosstabs"]:
        head = [f"{esc(t['a'])} \\ {esc(t['b'])}"] + [esc(label(c)) for c in t["columns"]]
        body = []
        for i, r in enumerate(t["rows"]):
            body.append([esc(label(r))] + [f"{share(t['real'][i][j])} | {share(t['synthetic'][i][j])}"
                                          for j in range(len(t["columns"]))])
        out.append(f"<h3>{esc(t['a'])} x {esc(t['b'])} (real | synthetic)</h3>" + table(head, body, left=(0,)))
    return "".join(out)


def _targets(report: dict) -> str:
    out = ["<h2>Level 3: the analyses users run</h2>"]
    for g in report["group_statistics"]:
        title = f"{g['stat']} of {g['column']}" + (f" by {', '.join(g['by'])}" if g["by"] else "") + \
                (f" where {g['where']}" if g["where"] else "") + (f", weighted by {g['weight']}" if g["weight"] else "")
        body = [[esc(", ".join(f"{k}={label(v)}" for k, v in r["group"].items()) or "all"),
                 num(r["real"]), num(r["synthetic"]), num(r["difference"]), num(r["se_real"]),
                 yes(r["within_error"]), f"{r['n_real']:,}", f"{r['n_synthetic']:,}"]
                for r in g["results"]]
        out.append(f"<h3>{esc(title)}</h3>" + table(
            ["group", "real", "synthetic", "difference", "real s.e.", "within 1.96 s.e.", "rows real",
             "rows synthetic"], body, left=(0,)))
    for r in report["regressions"]:
        out.append(_regression(r))
    if report["tstr"]:
        out.append("<h3>Train on synthetic, test on real</h3>" + para(
            "A model (gradient boosting) trained on the synthetic file and one trained on the real "
            "training rows both predict the held-out real rows; the closer the scores, the more "
            "the synthetic file supports prediction."))
        for t in report["tstr"]:
            out.append(para(f"{esc(t['target'])} ({t['task']}, {t['metric']}): synthetic-trained "
                            f"{num(t.get('score_synthetic'))}, real-trained {num(t.get('score_real'))}, "
                            f"difference {num(t.get('difference'))}."))
            if t.get("by_decile"):
                out.append(table(["decile of the real target", "rows", "MAE synthetic-trained",
                                  "MAE real-trained"],
                                 [[str(d["decile"]), str(d["n"]), num(d["mae_synthetic"]), num(d["mae_real"])]
                                  for d in t["by_decile"]]))
    return "".join(out) if len(out) > 1 else ""


def _regression(r: dict) -> str:
    which = ("combined over the synthetic files with the fully synthetic combining rules of "
             "Raghunathan, Reiter and Rubin (2003)" if r["combined"] else "first synthetic file")
    rows = f" on rows where <code>{esc(r['where'])}</code>" if r.get("where") else ""
    out = [f"<h3>Regression ({esc(r['family'])}): <code>{esc(r['formula'])}</code>{rows}</h3>",
           para(f"Numeric predictors {'standardized within each file' if r['standardize'] else 'on their own scale'}. "
                f"Interval overlap: 1 is identical intervals; about 0.7-0.8 is what a second sample "
                f"of the real population gives."),
           _fit_comparison(r["combined"] or r["single"], f"Estimates from the {which}, 95% confidence intervals")]
    if r.get("horseshoe"):
        out.append(_fit_comparison(r["horseshoe"], "The paper's Bayesian version (horseshoe prior on the "
                                                   "slopes, PyMC), first synthetic file, 95% credible intervals"))
    return "".join(out)


def _fit_comparison(fit: dict, title: str) -> str:
    out = [para(f"{title}: mean interval overlap {num(fit['mean_cio'])}, mean standardized squared "
                f"difference {num(fit['mean_std_sq_diff'])}, sign agreement {num(fit['sign_agreement'])} "
                f"over {fit['n_terms']} coefficients.")]
    terms = fit["terms"]
    out.append(table(["term", "real", "real 95% interval", "synthetic", "synthetic 95% interval", "overlap",
                      "std. sq. diff.", "same sign"],
                     [[esc(t["term"]), num(t["real"]), ci(t["real_lower"], t["real_upper"]),
                       num(t["synthetic"]), ci(t["synthetic_lower"], t["synthetic_upper"]),
                       num(t["cio"]), num(t["std_sq_diff"]), yes(t["sign_agree"])] for t in terms],
                     left=(0,)))
    shown = [t for t in terms if t["term"] != "Intercept" and None not in
             (t["real_lower"], t["real_upper"], t["synthetic_lower"], t["synthetic_upper"])]
    if shown:
        out.append(inline_png(coefficient_figure(shown)))
    return "".join(out)


def _general(report: dict) -> str:
    p, g = report["pmse"], report["propensity"]
    return "".join(["<h2>General utility: propensity score</h2>", para(
        f"A logistic model tries to tell real rows from synthetic ones (main effects of every "
        f"column, first synthetic file; {p['n_real']:,} real and {p['n_synthetic']:,} synthetic rows, "
        f"each side subsampled to at most {p.get('max_rows', p['n_real']):,}). pMSE {num(p['pmse'])}; "
        f"its expectation if the files came "
        f"from one distribution is {num(p['expected'])}; the ratio (synthpop's S_pMSE) is "
        f"{num(p['ratio'])}. A ratio near 1 means the model cannot tell the files apart better "
        f"than chance; note that a file keeping each marginal but shuffling rows can also score "
        f"near 1 on main effects."),
        para(f"A gradient-boosting classifier, which sees interactions and broken dependence between "
             f"columns, tries the same on every synthetic file; its score is the ROC AUC of "
             f"{g['folds']}-fold out-of-fold predictions, {num(g['auc'])} (mean over the files). 0.5 "
             f"means it cannot tell the files apart, 1 that it always can; judge general fidelity on "
             f"this one. Each side is subsampled to at most {g['max_rows']:,} rows (seeded): "
             f"{g['n_real_used']:,} of {g['n_real']:,} real rows used."),
        table(["synthetic file", "AUC", "rows used", "rows"],
              [[str(i + 1), num(f["auc"]), f"{f['n_synthetic_used']:,}", f"{f['n_synthetic']:,}"]
               for i, f in enumerate(g["files"])])])


def _risk(report: dict) -> str:
    r = report["risk"]
    c = r["exact_copies"]
    out = ["<h2>Disclosure risk</h2>",
           para(f"Exact copies: {c['all_columns']['count']} synthetic rows (share "
                f"{num(c['all_columns']['share'])}) equal a real row on all {c['all_columns']['n_columns']} "
                f"columns (0 is required). " + (
                  f"On the {c['quasi_identifiers']['n_columns']} quasi-identifiers, "
                  f"{c['quasi_identifiers']['count_matching_unique_real']} synthetic rows match a "
                  f"combination held by exactly one real row." if c.get("quasi_identifiers") else ""))]
    if r["dcr"]:
        d = r["dcr"]
        out.append(para(f"Distance to closest record: the median distance from a synthetic row to its nearest "
                        f"real training row is {num(d['synthetic']['q50'])}, against "
                        f"{num(d['holdout']['q50'])} for held-out real rows (difference "
                        f"{num(d['median_difference'])}, 95% interval {ci(*d['median_difference_ci95'])}). "
                        f"Share of synthetic rows closer than 95% of held-out rows: "
                        f"{num(d['share_synthetic_below_holdout_q05'])} (about 0.05 expected; much more "
                        f"would mean the synthesizer copies training rows)."))
    if r["attribute_inference"]:
        out.append("<h3>Attribute inference from the quasi-identifiers</h3>" + para(
            "A model trained on the synthetic file predicts each sensitive column of the real rows "
            "from the quasi-identifiers; lift is its score over the best guess without them. The "
            "article's levels: high above 0.10, moderate 0.05-0.10, low below. The same model "
            "trained on held-out real rows shows what any sample of the population would reveal."))
        out.append(table(["column", "metric", "score (synthetic-trained)", "baseline", "lift", "level",
                          "lift (holdout-trained)"],
                         [[esc(a["column"]), esc(a["metric"]), num(a["score_synthetic"]), num(a["baseline"]),
                           num(a["lift"]), esc(a["level"]), num(a.get("lift_holdout"))]
                          for a in r["attribute_inference"]], left=(0, 1, 5)))
    if r.get("anonymeter"):
        out.append(_anonymeter(r["anonymeter"]))
    for o in r["outlier_disclosure"]:
        out.append(para(f"Outlier disclosure ({esc(o['public'])} -> {esc(o['sensitive'])}, {o['k']} rows at "
                        f"each end): R^2 low end {num(o['low']['r2'])} (95% null {num(o['low']['null_r2_q95'])}), "
                        f"high end {num(o['high']['r2'])} (95% null {num(o['high']['null_r2_q95'])}); near 0 "
                        f"means synthetic outliers do not reveal the real outliers' values."))
    return "".join(out)


def _anonymeter(a: dict) -> str:
    attacks = [("singling out (one column at a time)", a["singling_out"])]
    if a.get("linkability"):
        attacks.append(("linkability (quasi-identifiers vs the other columns)", a["linkability"]))
    attacks += [(f"inference of {i['column']} from the quasi-identifiers", i) for i in a["inference"]]
    rate = lambda r: "n/a" if r is None else f"{num(r['value'])} &plusmn; {num(r['error'])}"
    body = [[esc(name), num(x["risk"]), ci(*x["risk_ci95"]), rate(x["attack_rate"]), rate(x["control_rate"]),
             rate(x["baseline_rate"]), yes(x["informative"])] for name, x in attacks]
    return ("<h3>Anonymeter attacks</h3>" + para(esc(a["meaning"]) + f" {a['n_attacks']} attacks each; an attack "
            "no better than the random baseline is marked not informative.")
            + table(["attack", "risk", "95% interval", "success on training rows", "success on held-out rows",
                     "random baseline", "informative"], body, left=(0,)))
