"""HTML fragments for the report page: tables, paragraphs, escaped text, and numbers,
shares and intervals formatted for reading ("n/a" where a value was not computed)."""
from __future__ import annotations

import html


def table(head: list[str], body: list[list[str]], left=()) -> str:
    """A table of HTML cells (already escaped); columns whose index is in ``left`` are left-aligned."""
    cls = lambda i: " class='l'" if i in left else ""
    h = "".join(f"<th{cls(i)}>{c}</th>" for i, c in enumerate(head))
    b = "".join("<tr>" + "".join(f"<td{cls(i)}>{c}</td>" for i, c in enumerate(row)) + "</tr>" for row in body)
    return f"<table><tr>{h}</tr>{b}</table>"


def para(text: str, cls: str = "") -> str:
    """A paragraph of HTML ``text``, with CSS class ``cls`` if given."""
    return f"<p class='{cls}'>{text}</p>" if cls else f"<p>{text}</p>"


def esc(x) -> str:
    """``x`` as escaped HTML text."""
    return html.escape(str(x))


def num(v) -> str:
    """A value: 4 significant digits for a float, thousands separators for an int, yes/no."""
    if v is None:
        return "n/a"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    return f"{v:.4g}" if isinstance(v, float) else esc(v)


def share(v) -> str:
    """A share of rows as a percentage; "suppressed" for a cell under the small-cell rule."""
    return "suppressed" if v is None else f"{100 * v:.1f}%"


def ci(lo, hi) -> str:
    """An interval [lo, hi]."""
    return f"[{num(lo)}, {num(hi)}]"


def yes(v) -> str:
    """A check's outcome: yes, a flagged no, or n/a."""
    return "n/a" if v is None else "yes" if v else "<span class='fail'>no</span>"


def label(v) -> str:
    """A level or group value as text ("missing" for None)."""
    return "missing" if v is None else str(v)
