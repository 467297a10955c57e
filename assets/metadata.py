"""Metadata helpers: aggregates only, and errors that never quote data."""
from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

import dagster as dg
import numpy as np

from mixsynth import InputError
from mixsynth.report.measures import show_value

_PLOT = re.compile(r"""src=['"](data:image/png;base64,[A-Za-z0-9+/=]+)['"]""")


@contextlib.contextmanager
def withheld_details(stage: str):
    """Let the core's InputError (one line, no values) through; replace any other error by
    its type, since its message may quote a confidential value. ``MIXSYNTH_DEBUG=1`` (on the
    confidential machine only) lets every error through."""
    try:
        yield
    except (InputError, dg.Failure):
        raise
    except Exception as exc:
        if os.environ.get("MIXSYNTH_DEBUG") == "1":
            raise
        raise dg.Failure(
            description=f"{type(exc).__name__} while {stage} (details withheld as they may quote "
                        f"confidential values; set MIXSYNTH_DEBUG=1 on the confidential machine "
                        f"to see them)") from None


def number(x) -> float | None:
    """A measure for asset metadata, to four significant digits (the UI shows a float's every
    digit: 0.7796576999020183 reads as 0.7797); None stays None (not computed)."""
    if x is None:
        return None
    x = float(x)
    return float(f"{x:.4g}") if np.isfinite(x) else x


def measures_table(headline: dict, meanings: dict, names) -> dg.MetadataValue:
    """A markdown table of the named headline measures: name, value, meaning."""
    lines = ["| measure | value | meaning |", "|---|---|---|"]
    lines += [f"| {n} | {show_value(headline.get(n))} | {meanings.get(n, '')} |" for n in names]
    return dg.MetadataValue.md("\n".join(lines))


def rules_table(decision: dict) -> dg.MetadataValue:
    """The release rules as a markdown table, then the limitation texts."""
    lines = ["| rule | value | threshold | passed | reason |", "|---|---|---|---|---|"]
    for r in decision["rules"]:
        passed = "yes" if r["passed"] else "with limitation" if r["passes_with_limitation"] else "NO"
        lines.append(f"| {r['measure']} | {show_value(r['value'])} | {r['threshold']} | {passed} | {r['reason']} |")
    if decision["limitations"]:
        lines += ["", "Limitations published with the file:", ""]
        lines += [f"- {t}" for t in decision["limitations"]]
    return dg.MetadataValue.md("\n".join(lines))


def expectations_table(outcome: dict) -> dg.MetadataValue:
    """The expectations as a markdown table (counts of unexpected rows, never values)."""
    lines = [f"{outcome['successful']} of {outcome['evaluated']} expectations met.", "",
             "| file | expectation | column | met | unexpected rows |", "|---|---|---|---|---|"]
    lines += [f"| {r['file']} | {r['expectation']} | {r['column'] or ''} | {'yes' if r['success'] else 'NO'} | "
              f"{show_value(r['unexpected_count'])} |" for r in outcome["results"]]
    return dg.MetadataValue.md("\n".join(lines))


def report_plots(page: Path) -> dg.MetadataValue:
    """The plots of a report page (inline PNG images) as markdown, which the UI shows inline.
    They are the page's aggregate figures, small cells already left out."""
    images = _PLOT.findall(page.read_text(encoding="utf-8"))
    return dg.MetadataValue.md("\n\n".join(f"![plot {i}]({src})" for i, src in enumerate(images, 1))
                               or f"No plots; see {page.name}.")
