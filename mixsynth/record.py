"""The synthesis record of a release: what went in, how it was made, and what let it out.

``synthesis_record`` assembles one JSON-ready dict (schema ``mixsynth-record/1``): the
input's fingerprint (a digest, never data), the spec as written, the modelled columns'
kinds and roles (never their levels), how the input was read (text parsed as numbers,
rare levels merged into ``other`` or, in number columns, suppressed (read as blank);
constant columns, number columns too rare to release and so written blank: names and
counts only), the method settings, every seed, the package versions, the convergence diagnostics, the report, the release thresholds, the
expectation outcomes, the decision and its limitations. It holds no time stamp, so the
same input, spec and seeds give the same record byte for byte. ``record_html`` renders it
as a readable page; ``write_record`` writes both files.
"""
from __future__ import annotations

import html
import json
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from .schema import TableSpec
from .tableio import atomic_path

SCHEMA = "mixsynth-record/1"
PACKAGES = ("mixsynth", "numpy", "scipy", "pandas", "numba", "arviz", "stochtree",
            "great_expectations", "dagster")


def package_versions() -> dict[str, str | None]:
    """Installed versions of the packages that make a release (None when absent)."""
    found = {}
    for name in PACKAGES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


def synthesis_record(*, survey: str, wave: str, fingerprint: str, spec_raw: dict, spec: TableSpec,
                     method: dict, thresholds: dict | None, seeds: dict, convergence: dict | None, report: dict,
                     expectations: dict, decision: dict, outputs: dict[str, str]) -> dict:
    """The record (module docstring). ``method`` holds the sampler, synthesis and BART
    settings; ``thresholds`` the spec's ``release:`` section; ``seeds`` names each seed used; ``expectations`` is ``expectations.validate``'s
    outcome; ``decision`` is ``report.release.decide``'s; ``outputs`` maps each synthetic
    file's name to its digest."""
    return {
        "schema": SCHEMA,
        "survey": survey,
        "wave": wave,
        "input": {"fingerprint": fingerprint, "rows": report["rows"]["real"],
                  "holdout_rows": report["rows"]["holdout"]},
        "spec": spec_raw,
        "columns": [{"name": c.name, "kind": c.kind, "role": c.role, "unordered": c.unordered}
                    for c in spec.columns],
        "input_notes": list(spec.notes),
        "recoded_columns": spec.recoded,
        "constant_columns": [c["name"] for c in spec.constants if c["value"] is not None],
        "blank_columns": spec.blanked,
        "outputs": outputs,
        "method": method,
        "seeds": seeds,
        "versions": package_versions(),
        "convergence": convergence,
        "thresholds": thresholds,
        "expectations": expectations,
        "decision": decision["decision"],
        "rules": decision["rules"],
        "limitations": decision["limitations"],
        "intended_uses": decision.get("intended_uses"),
        "report": {k: v for k, v in report.items() if k != "seconds"},   # timings would break byte equality
    }


def record_html(record: dict) -> str:
    """A readable page of the record: decision, rules, limitations, input, method, seeds,
    convergence, expectations and versions (the full report is in report.html)."""
    e = lambda x: html.escape("n/a" if x is None else f"{x:.4g}" if isinstance(x, float) else str(x))
    table = lambda head, rows: (
        "<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in head) + "</tr>"
        + "".join("<tr>" + "".join(f"<td>{e(v)}</td>" for v in row) + "</tr>" for row in rows) + "</table>")
    conv = record["convergence"] or {}
    exp = record["expectations"]
    parts = [
        f"<h1>Synthesis record: {e(record['survey'])}, wave {e(record['wave'])}</h1>",
        f"<p>Decision: <strong>{e(record['decision'])}</strong>. Intended uses: {e(record['intended_uses'])}</p>",
        "<h2>Release rules</h2>",
        table(["measure", "value", "threshold", "result"],
              [[r["measure"], r["value"], r["threshold"], r["reason"]] for r in record["rules"]]),
        "<h2>Limitations</h2>",
        "<ul>" + "".join(f"<li>{e(t)}</li>" for t in record["limitations"]) + "</ul>"
        if record["limitations"] else "<p>None.</p>",
        "<h2>Input</h2>",
        table(["fingerprint", "rows synthesized from", "rows held out"],
              [[record["input"]["fingerprint"], record["input"]["rows"], record["input"]["holdout_rows"]]]),
        "<h2>How the input was read</h2>",
        "<ul>" + "".join(f"<li>{e(n)}</li>" for n in record.get("input_notes", [])) + "</ul>"
        if record.get("input_notes") else "<p>As written: no column recoded, parsed or held constant.</p>",
        "<h2>Synthetic files</h2>",
        table(["file", "fingerprint"], list(record["outputs"].items())),
        "<h2>Columns</h2>",
        table(["column", "kind", "role", "unordered"],
              [[c["name"], c["kind"], c["role"], c["unordered"]] for c in record["columns"]]),
        "<h2>Method settings</h2>",
        table(["setting", "value"], [[k, json.dumps(v)] for k, v in record["method"].items()]),
        "<h2>Seeds</h2>",
        table(["used for", "seed"], list(record["seeds"].items())),
        "<h2>Convergence of the copula correlation</h2>",
        table(["measure", "value"], [[k, v] for k, v in conv.items() if not isinstance(v, dict)]),
        "<h2>Expectations on the synthetic file</h2>",
        f"<p>{e(exp['successful'])} of {e(exp['evaluated'])} met.</p>",
        table(["file", "expectation", "column", "met", "unexpected rows"],
              [[r["file"], r["expectation"], r["column"], r["success"], r["unexpected_count"]]
               for r in exp["results"]]),
        "<h2>Package versions</h2>",
        table(["package", "version"], list(record["versions"].items())),
    ]
    style = ("body{font-family:sans-serif;max-width:60em;margin:2em auto}"
             "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}")
    return (f"<!doctype html><html><head><meta charset=\"utf-8\"><title>Synthesis record</title>"
            f"<style>{style}</style></head><body>{''.join(parts)}</body></html>\n")


def write_record(folder, record: dict) -> list[Path]:
    """Write ``record.json`` and ``record.html`` into ``folder``, each atomically."""
    folder = Path(folder)
    paths = []
    for name, text in (("record.json", json.dumps(record, indent=1, allow_nan=False) + "\n"),
                       ("record.html", record_html(record))):
        with atomic_path(folder / name) as tmp:
            tmp.write_text(text, encoding="utf-8")
        paths.append(folder / name)
    return paths
