"""The report's files: ``report.json``, ``decision.json``, ``summary.md``, ``report.html``."""
from __future__ import annotations

import json
from pathlib import Path

from .html import render_html
from .measures import show_value
from ..tableio import atomic_path


def write_report(out, report: dict, decision: dict | None) -> list[Path]:
    """Write the report's files into folder ``out`` (created), each atomically (a
    temporary file renamed into place); ``decision.json`` only with a decision. Returns the
    paths written."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    texts = {"report.json": json.dumps(report, allow_nan=False, indent=1)}
    if decision is not None:
        texts["decision.json"] = json.dumps(decision, allow_nan=False, indent=1)
    texts["summary.md"] = summary_markdown(report, decision)
    texts["report.html"] = render_html(report, decision)
    paths = []
    for name, text in texts.items():
        with atomic_path(out / name) as tmp:
            tmp.write_text(text, encoding="utf-8")
        paths.append(out / name)
    return paths


def summary_markdown(report: dict, decision: dict | None) -> str:
    """A short markdown summary: headline table, then the decision rule by rule."""
    rows = report["rows"]
    lines = ["# mixsynth report", "",
             f"{rows['real']:,} real rows; {rows['m']} synthetic file(s) of "
             f"{', '.join(f'{n:,}' for n in rows['synthetic'])} rows; holdout: "
             f"{'none' if rows['holdout'] is None else format(rows['holdout'], ',')}.", "",
             "| measure | value | meaning |", "|---|---|---|"]
    lines += [f"| {k} | {show_value(v)} | {report['headline_meaning'].get(k, '')} |"
              for k, v in report["headline"].items()]
    if decision is None:
        lines += ["", "No `release:` section in the spec: no decision."]
    else:
        lines += ["", f"## Decision: {decision['decision']}", ""]
        if decision["intended_uses"]:
            lines += [f"Intended uses: {decision['intended_uses']}", ""]
        lines += ["| rule | value | threshold | result |", "|---|---|---|---|"]
        for r in decision["rules"]:
            result = ("pass" if r["passed"] else "fails, released with limitation"
                      if r["passes_with_limitation"] else "FAIL") + f" ({r['reason']})"
            lines.append(f"| {r['measure']} | {show_value(r['value'])} | {r['threshold']} | {result} |")
        if decision["limitations"]:
            lines += ["", "Limitations to publish with the file:", ""]
            lines += [f"- {text}" for text in decision["limitations"]]
    if report["notes"]:
        lines += ["", "Notes:", ""] + [f"- {n}" for n in report["notes"]]
    return "\n".join(lines) + "\n"
