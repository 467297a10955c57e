"""The report as one self-contained HTML page for a methodologist: the decision first, then
each level of evidence with its plots (PNG, inlined) and what each number means.

``render_html(report, decision)`` reads only the report dict (aggregates, already subject to
the small-cell rule) and the decision dict; it never sees a table.
"""
from __future__ import annotations

import base64
import html
import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import numpy as np  # noqa: E402

REAL, SYNTHETIC = "#444444", "#d95f02"
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
             _p(f"{rows['real']:,} real rows compared with {rows['m']} synthetic file(s) of "
                f"{', '.join(f'{n:,}' for n in rows['synthetic'])} rows; holdout of real rows kept "
                f"out of synthesis: {'none' if rows['holdout'] is None else format(rows['holdout'], ',')}. "
                f"Schema {report['schema']}. Every figure below is an aggregate; real cells, bins "
                f"and groups with fewer rows than the small-cell threshold are not shown.", "note")]
    parts += [_decision(decision), _headline(report), _responses(report), _marginals(report), _associations(report),
              _crosstabs(report), _targets(report), _general(report), _risk(report)]
    if report["notes"]:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{_e(n)}</li>" for n in report["notes"]) + "</ul>")
    return "\n".join(parts) + "</body></html>\n"


# ---------------------------------------------------------------- sections

def _decision(decision: dict | None) -> str:
    if decision is None:
        return "<h2>Decision</h2>" + _p("The spec has no <code>release:</code> section, so no decision was taken.")
    verdict = decision["decision"]
    out = [f"<div class='banner {verdict}'>Decision: <b>{_e(verdict)}</b></div>"]
    if decision.get("intended_uses"):
        out.append(_p(f"Intended uses: {_e(decision['intended_uses'])}"))
    body = []
    for r in decision["rules"]:
        if r["passed"]:
            result = "<span class='pass'>pass</span>"
        elif r["passes_with_limitation"]:
            result = "<span class='limit'>fails; released with the stated limitation</span>"
        else:
            result = "<span class='fail'>FAIL</span>"
        body.append([_e(r["measure"]), _num(r["value"]), _e(r["threshold"]), result, _e(r["reason"])])
    out.append(_table(["rule", "value", "threshold", "result", "why"], body, left=(0, 3, 4)))
    if decision["limitations"]:
        out.append("<p>Limitations to publish with the file:</p><ul>"
                   + "".join(f"<li>{_e(t)}</li>" for t in decision["limitations"]) + "</ul>")
    return "<h2>Release decision</h2>" + "".join(out)


def _headline(report: dict) -> str:
    body = [[_e(k), _num(v), _e(report["headline_meaning"].get(k, ""))] for k, v in report["headline"].items()]
    return "<h2>Headline measures</h2>" + _table(["measure", "value", "meaning"], body, left=(0, 2))


def _responses(report: dict) -> str:
    """Which columns BART modelled after the copula, and the screen's scores."""
    r = report.get("responses")
    if not r:
        return ""
    out = ["<h2>Columns modelled by BART</h2>", _p(
        "A Gaussian copula carries monotone dependence only. Columns whose relation to the others "
        "it cannot follow are modelled by BART after it (rank likelihood; probit for a 0/1 column). "
        + _e(r["summary"]) + ".")]
    if r.get("derived"):
        out.append(_p("Columns that are a function of another column in the real file (a recode, a value "
                      "per area) are not modelled: each synthetic row looks them up from its source, so "
                      "the link holds exactly: " + _e("; ".join(r["derived"])) + "."))
    if r.get("refined"):
        out.append(_p("Ordered columns that determine a categorical the copula models are kept within it: "
                      "where a synthetic row's value falls in another level, it is drawn again from the real "
                      "rows of its level: " + _e("; ".join(r["refined"])) + "."))
    screen = r.get("screen")
    if screen:
        out.append(_p(f"The screen (on {screen['rows']:,} rows, {screen['rule']['folds']}-fold): out-of-fold "
                      f"R² of a linear model on the other columns' normal scores, and what gradient boosting "
                      f"adds to it; a gain of at least {screen['rule']['min_gain']} with z at least "
                      f"{screen['rule']['min_z']} makes a column a response (at most "
                      f"{screen['rule']['max_screened']}), and the outcomes of declared regressions always are."))
        out.append(_table(["column", "kind", "linear R²", "gain", "z", "BART", "why"],
                          [[_e(c["name"]), _e(c["kind"]), _num(c["linear_r2"]), _num(c["gain"]), _num(c["z"]),
                            _yes(c["chosen"]), _e(c["reason"])] for c in screen["scores"]], left=(0, 1, 6)))
    return "".join(out)


def _marginals(report: dict) -> str:
    body = [[_e(m["column"]), _e(m["treated_as"]), _num(m["tvd"]), _num(m["ks"]), _num(m["wasserstein_scaled"]),
             _num(m["median_shift"]), _num(m["iqr_shift"]), _num(m["missing_diff_pp"])]
            for m in report["marginals"]]
    out = ["<h2>Level 1: marginal distributions</h2>",
           _p("TVD: total variation distance of the category shares (0 same, 1 disjoint; missing is "
              "a category). KS: largest gap between the two distribution functions. Wasserstein is "
              "scaled by the real interquartile range. Shifts are relative (synthetic - real) / real. "
              "Missing: synthetic minus real missing rate in percentage points."),
           _table(["column", "treated as", "TVD", "KS", "Wasserstein / IQR", "median shift",
                   "IQR shift", "missing (pp)"], body, left=(0, 1))]
    dists = report.get("distributions") or []
    for start in range(0, len(dists), 24):
        out.append(_img(_distribution_figure(dists[start:start + 24])))
    return "".join(out)


def _associations(report: dict) -> str:
    a = report["associations"]
    s, drift = a["summary"], a["drift"]
    out = ["<h2>Level 2: associations</h2>",
           _p(f"Cramer's V for categorical pairs (a drop over {s['drop_flag']:g} is flagged: "
              f"{s['n_flagged']} flagged; largest drop {_num(s['max_v_drop'])} for "
              f"{_e(' x '.join(s['max_v_drop_pair'] or []))}), Pearson and Spearman correlation for "
              f"numeric pairs (largest change {_num(s['max_abs_pearson_change'])}), and the "
              f"correlation ratio eta for categorical x numeric pairs. Correlation drift score "
              f"(Frobenius norm of the difference of the correlation matrices over "
              f"{drift['n_encoded_columns']} encoded columns): {_num(drift['score'])}; the article's "
              f"rule of thumb looks above {drift['threshold']:g}.")]
    names, real, syn = _association_matrices(a)
    if len(names) >= 2:
        out.append(_img(_association_figure(names, real, syn)))
    flagged = [p for p in a["categorical_pairs"] if p["flag"]]
    worst = sorted((p for p in a["categorical_pairs"] if p["drop"] is not None),
                   key=lambda p: -p["drop"])[:10]
    if worst:
        out.append("<p>Categorical pairs with the largest fall of Cramer's V:</p>")
        out.append(_table(["pair", "V real", "V synthetic", "drop", "flag"],
                          [[_e(f"{p['a']} x {p['b']}"), _num(p["v_real"]), _num(p["v_synthetic"]),
                            _num(p["drop"]), "<span class='fail'>flag</span>" if p["flag"] else ""]
                           for p in worst], left=(0,)))
    if not flagged:
        out.append(_p("No categorical pair lost more than the flagged amount of association."))
    return "".join(out)


def _crosstabs(report: dict) -> str:
    if not report["crosstabs"]:
        return ""
    out = ["<h2>Declared cross-tabulations</h2>",
           _p("Cell shares of all rows, real beside synthetic (real cells under the small-cell "
              "threshold shown as 'suppressed').")]
    for t in report["crosstabs"]:
        head = [f"{_e(t['a'])} \\ {_e(t['b'])}"] + [_e(_label(c)) for c in t["columns"]]
        body = []
        for i, r in enumerate(t["rows"]):
            body.append([_e(_label(r))] + [f"{_share(t['real'][i][j])} | {_share(t['synthetic'][i][j])}"
                                          for j in range(len(t["columns"]))])
        out.append(f"<h3>{_e(t['a'])} x {_e(t['b'])} (real | synthetic)</h3>" + _table(head, body, left=(0,)))
    return "".join(out)


def _targets(report: dict) -> str:
    out = ["<h2>Level 3: the analyses users run</h2>"]
    for g in report["group_statistics"]:
        title = f"{g['stat']} of {g['column']}" + (f" by {', '.join(g['by'])}" if g["by"] else "") + \
                (f" where {g['where']}" if g["where"] else "") + (f", weighted by {g['weight']}" if g["weight"] else "")
        body = [[_e(", ".join(f"{k}={_label(v)}" for k, v in r["group"].items()) or "all"),
                 _num(r["real"]), _num(r["synthetic"]), _num(r["difference"]), _num(r["se_real"]),
                 _yes(r["within_error"]), f"{r['n_real']:,}", f"{r['n_synthetic']:,}"]
                for r in g["results"]]
        out.append(f"<h3>{_e(title)}</h3>" + _table(
            ["group", "real", "synthetic", "difference", "real s.e.", "within 1.96 s.e.", "rows real",
             "rows synthetic"], body, left=(0,)))
    for r in report["regressions"]:
        out.append(_regression(r))
    if report["tstr"]:
        out.append("<h3>Train on synthetic, test on real</h3>" + _p(
            "A model (gradient boosting) trained on the synthetic file and one trained on the real "
            "training rows both predict the held-out real rows; the closer the scores, the more "
            "the synthetic file supports prediction."))
        for t in report["tstr"]:
            out.append(_p(f"{_e(t['target'])} ({t['task']}, {t['metric']}): synthetic-trained "
                          f"{_num(t.get('score_synthetic'))}, real-trained {_num(t.get('score_real'))}, "
                          f"difference {_num(t.get('difference'))}."))
            if t.get("by_decile"):
                out.append(_table(["decile of the real target", "rows", "MAE synthetic-trained",
                                   "MAE real-trained"],
                                  [[str(d["decile"]), str(d["n"]), _num(d["mae_synthetic"]), _num(d["mae_real"])]
                                   for d in t["by_decile"]]))
    return "".join(out) if len(out) > 1 else ""


def _regression(r: dict) -> str:
    which = ("combined over the synthetic files with the fully synthetic combining rules of "
             "Raghunathan, Reiter and Rubin (2003)" if r["combined"] else "first synthetic file")
    rows = f" on rows where <code>{_e(r['where'])}</code>" if r.get("where") else ""
    out = [f"<h3>Regression ({_e(r['family'])}): <code>{_e(r['formula'])}</code>{rows}</h3>",
           _p(f"Numeric predictors {'standardized within each file' if r['standardize'] else 'on their own scale'}. "
              f"Interval overlap: 1 is identical intervals; about 0.7-0.8 is what a second sample "
              f"of the real population gives."),
           _fit_comparison(r["combined"] or r["single"], f"Estimates from the {which}, 95% confidence intervals")]
    if r.get("horseshoe"):
        out.append(_fit_comparison(r["horseshoe"], "The paper's Bayesian version (horseshoe prior on the "
                                                   "slopes, PyMC), first synthetic file, 95% credible intervals"))
    return "".join(out)


def _fit_comparison(fit: dict, title: str) -> str:
    out = [_p(f"{title}: mean interval overlap {_num(fit['mean_cio'])}, mean standardized squared "
              f"difference {_num(fit['mean_std_sq_diff'])}, sign agreement {_num(fit['sign_agreement'])} "
              f"over {fit['n_terms']} coefficients.")]
    terms = fit["terms"]
    out.append(_table(["term", "real", "real 95% interval", "synthetic", "synthetic 95% interval", "overlap",
                       "std. sq. diff.", "same sign"],
                      [[_e(t["term"]), _num(t["real"]), _ci(t["real_lower"], t["real_upper"]),
                        _num(t["synthetic"]), _ci(t["synthetic_lower"], t["synthetic_upper"]),
                        _num(t["cio"]), _num(t["std_sq_diff"]), _yes(t["sign_agree"])] for t in terms],
                      left=(0,)))
    shown = [t for t in terms if t["term"] != "Intercept" and None not in
             (t["real_lower"], t["real_upper"], t["synthetic_lower"], t["synthetic_upper"])]
    if shown:
        out.append(_img(_coefficient_figure(shown)))
    return "".join(out)


def _general(report: dict) -> str:
    p, g = report["pmse"], report["propensity"]
    return "".join(["<h2>General utility: propensity score</h2>", _p(
        f"A logistic model tries to tell real rows from synthetic ones (main effects of every "
        f"column, first synthetic file; {p['n_real']:,} real and {p['n_synthetic']:,} synthetic rows, "
        f"each side subsampled to at most {p.get('max_rows', p['n_real']):,}). pMSE {_num(p['pmse'])}; "
        f"its expectation if the files came "
        f"from one distribution is {_num(p['expected'])}; the ratio (synthpop's S_pMSE) is "
        f"{_num(p['ratio'])}. A ratio near 1 means the model cannot tell the files apart better "
        f"than chance; note that a file keeping each marginal but shuffling rows can also score "
        f"near 1 on main effects."),
        _p(f"A gradient-boosting classifier, which sees interactions and broken dependence between "
           f"columns, tries the same on every synthetic file; its score is the ROC AUC of "
           f"{g['folds']}-fold out-of-fold predictions, {_num(g['auc'])} (mean over the files). 0.5 "
           f"means it cannot tell the files apart, 1 that it always can; judge general fidelity on "
           f"this one. Each side is subsampled to at most {g['max_rows']:,} rows (seeded): "
           f"{g['n_real_used']:,} of {g['n_real']:,} real rows used."),
        _table(["synthetic file", "AUC", "rows used", "rows"],
               [[str(i + 1), _num(f["auc"]), f"{f['n_synthetic_used']:,}", f"{f['n_synthetic']:,}"]
                for i, f in enumerate(g["files"])])])


def _risk(report: dict) -> str:
    r = report["risk"]
    c = r["exact_copies"]
    out = ["<h2>Disclosure risk</h2>",
           _p(f"Exact copies: {c['all_columns']['count']} synthetic rows (share "
              f"{_num(c['all_columns']['share'])}) equal a real row on all {c['all_columns']['n_columns']} "
              f"columns (0 is required). " + (
                  f"On the {c['quasi_identifiers']['n_columns']} quasi-identifiers, "
                  f"{c['quasi_identifiers']['count_matching_unique_real']} synthetic rows match a "
                  f"combination held by exactly one real row." if c.get("quasi_identifiers") else ""))]
    if r["dcr"]:
        d = r["dcr"]
        out.append(_p(f"Distance to closest record: the median distance from a synthetic row to its nearest "
                      f"real training row is {_num(d['synthetic']['q50'])}, against "
                      f"{_num(d['holdout']['q50'])} for held-out real rows (difference "
                      f"{_num(d['median_difference'])}, 95% interval {_ci(*d['median_difference_ci95'])}). "
                      f"Share of synthetic rows closer than 95% of held-out rows: "
                      f"{_num(d['share_synthetic_below_holdout_q05'])} (about 0.05 expected; much more "
                      f"would mean the synthesizer copies training rows)."))
    if r["attribute_inference"]:
        out.append("<h3>Attribute inference from the quasi-identifiers</h3>" + _p(
            "A model trained on the synthetic file predicts each sensitive column of the real rows "
            "from the quasi-identifiers; lift is its score over the best guess without them. The "
            "article's levels: high above 0.10, moderate 0.05-0.10, low below. The same model "
            "trained on held-out real rows shows what any sample of the population would reveal."))
        out.append(_table(["column", "metric", "score (synthetic-trained)", "baseline", "lift", "level",
                           "lift (holdout-trained)"],
                          [[_e(a["column"]), _e(a["metric"]), _num(a["score_synthetic"]), _num(a["baseline"]),
                            _num(a["lift"]), _e(a["level"]), _num(a.get("lift_holdout"))]
                           for a in r["attribute_inference"]], left=(0, 1, 5)))
    if r.get("anonymeter"):
        out.append(_anonymeter(r["anonymeter"]))
    for o in r["outlier_disclosure"]:
        out.append(_p(f"Outlier disclosure ({_e(o['public'])} -> {_e(o['sensitive'])}, {o['k']} rows at "
                      f"each end): R^2 low end {_num(o['low']['r2'])} (95% null {_num(o['low']['null_r2_q95'])}), "
                      f"high end {_num(o['high']['r2'])} (95% null {_num(o['high']['null_r2_q95'])}); near 0 "
                      f"means synthetic outliers do not reveal the real outliers' values."))
    return "".join(out)


def _anonymeter(a: dict) -> str:
    attacks = [("singling out (one column at a time)", a["singling_out"])]
    if a.get("linkability"):
        attacks.append(("linkability (quasi-identifiers vs the other columns)", a["linkability"]))
    attacks += [(f"inference of {i['column']} from the quasi-identifiers", i) for i in a["inference"]]
    rate = lambda r: "n/a" if r is None else f"{_num(r['value'])} &plusmn; {_num(r['error'])}"
    body = [[_e(name), _num(x["risk"]), _ci(*x["risk_ci95"]), rate(x["attack_rate"]), rate(x["control_rate"]),
             rate(x["baseline_rate"]), _yes(x["informative"])] for name, x in attacks]
    return ("<h3>Anonymeter attacks</h3>" + _p(_e(a["meaning"]) + f" {a['n_attacks']} attacks each; an attack "
            "no better than the random baseline is marked not informative.")
            + _table(["attack", "risk", "95% interval", "success on training rows", "success on held-out rows",
                      "random baseline", "informative"], body, left=(0,)))


# ---------------------------------------------------------------- figures

def _distribution_figure(dists: list[dict]):
    cols = 4
    rows = -(-len(dists) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(12, 2.4 * rows), squeeze=False)
    for ax in axes.flat[len(dists):]:
        ax.axis("off")
    for ax, d in zip(axes.flat, dists):
        real = np.array([np.nan if v is None else v for v in d["real"]])
        syn = np.array(d["synthetic"])
        x = np.arange(len(syn))
        if d["treated_as"] == "categorical":
            ticks = [_label(v) for v in d["labels"]]
        else:
            e = d["edges"]
            ticks = ["<"] + [f"{v:.4g}" for v in e[:-1]] + [">", "NA"]
            if real[-1] == 0 and syn[-1] == 0:  # no missing values: drop the NA bin
                x, real, syn, ticks = x[:-1], real[:-1], syn[:-1], ticks[:-1]
        ax.bar(x - 0.2, np.nan_to_num(real), 0.4, color=REAL, label="real")
        ax.bar(x + 0.2, syn, 0.4, color=SYNTHETIC, label="synthetic")
        step = max(1, len(ticks) // 8)
        ax.set_xticks(x[::step])
        ax.set_xticklabels([str(t)[:10] for t in ticks[::step]], rotation=45, ha="right", fontsize=7)
        title = d["column"] + (f" ({d['suppressed']} small bins hidden)" if d["suppressed"] else "")
        ax.set_title(title, fontsize=9)
        ax.tick_params(axis="y", labelsize=7)
    axes.flat[0].legend(fontsize=7)
    fig.tight_layout()
    return fig


def _association_matrices(a: dict):
    """Columns and (real, synthetic) association matrices on one 0-1 scale: Cramer's V,
    |Pearson| and eta."""
    pairs = [(p["a"], p["b"], p["v_real"], p["v_synthetic"]) for p in a["categorical_pairs"]]
    pairs += [(p["a"], p["b"], _abs(p["pearson_real"]), _abs(p["pearson_synthetic"])) for p in a["numeric_pairs"]]
    pairs += [(p["categorical"], p["numeric"], p["eta_real"], p["eta_synthetic"]) for p in a["mixed_pairs"]]
    names = list(dict.fromkeys(n for p in pairs for n in p[:2]))
    index = {n: i for i, n in enumerate(names)}
    real, syn = np.full((2, len(names), len(names)), np.nan)
    for x, y, r, s in pairs:
        for m, v in ((real, r), (syn, s)):
            m[index[x], index[y]] = m[index[y], index[x]] = np.nan if v is None else v
    return names, real, syn


def _association_figure(names: list[str], real: np.ndarray, syn: np.ndarray):
    size = min(16, 3 + 0.25 * len(names))
    fig, axes = plt.subplots(1, 2, figsize=(2 * size + 1, size))
    panels = ((real, "association in the real file (V, |r|, eta)", "viridis", 0, 1),
              (syn - real, "synthetic - real", "RdBu", -0.3, 0.3))
    for ax, (m, title, cmap, lo, hi) in zip(axes, panels):
        im = ax.imshow(m, cmap=cmap, vmin=lo, vmax=hi)
        ax.set_xticks(range(len(names)))
        ax.set_yticks(range(len(names)))
        fs = 8 if len(names) <= 20 else 5
        ax.set_xticklabels(names, rotation=90, fontsize=fs)
        ax.set_yticklabels(names, fontsize=fs)
        ax.set_title(title, fontsize=10)
        fig.colorbar(im, ax=ax, shrink=0.7)
    fig.tight_layout()
    return fig


def _coefficient_figure(terms: list[dict]):
    """The paper's Figure 3: each coefficient's 95% interval, real above synthetic."""
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(terms) + 1))
    y = np.arange(len(terms))[::-1]
    for yi, t in zip(y, terms):
        ax.plot([t["real_lower"], t["real_upper"]], [yi + 0.15] * 2, color=REAL, lw=2)
        ax.plot([t["synthetic_lower"], t["synthetic_upper"]], [yi - 0.15] * 2, color=SYNTHETIC, lw=2)
        ax.plot(t["real"], yi + 0.15, "o", color=REAL, ms=4)
        ax.plot(t["synthetic"], yi - 0.15, "o", color=SYNTHETIC, ms=4)
    ax.axvline(0, color="#999", lw=0.8)
    ax.set_yticks(y)
    ax.set_yticklabels([t["term"] for t in terms], fontsize=8)
    ax.plot([], [], color=REAL, lw=2, label="real")
    ax.plot([], [], color=SYNTHETIC, lw=2, label="synthetic")
    ax.legend(fontsize=8, loc="best")
    ax.set_xlabel("coefficient with 95% interval")
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------- small helpers

def _img(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=72)
    plt.close(fig)
    return f"<p><img alt='plot' src='data:image/png;base64,{base64.b64encode(buf.getvalue()).decode()}'></p>"


def _table(head: list[str], body: list[list[str]], left=()) -> str:
    cls = lambda i: " class='l'" if i in left else ""
    h = "".join(f"<th{cls(i)}>{c}</th>" for i, c in enumerate(head))
    b = "".join("<tr>" + "".join(f"<td{cls(i)}>{c}</td>" for i, c in enumerate(row)) + "</tr>" for row in body)
    return f"<table><tr>{h}</tr>{b}</table>"


def _p(text: str, cls: str = "") -> str:
    return f"<p class='{cls}'>{text}</p>" if cls else f"<p>{text}</p>"


def _e(x) -> str:
    return html.escape(str(x))


def _num(v) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    return f"{v:.4g}" if isinstance(v, float) else _e(v)


def _share(v) -> str:
    return "suppressed" if v is None else f"{100 * v:.1f}%"


def _ci(lo, hi) -> str:
    return f"[{_num(lo)}, {_num(hi)}]"


def _yes(v) -> str:
    return "n/a" if v is None else "yes" if v else "<span class='fail'>no</span>"


def _label(v) -> str:
    return "missing" if v is None else str(v)


def _abs(v):
    return None if v is None else abs(v)
