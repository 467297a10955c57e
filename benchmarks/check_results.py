"""Checks that benchmarks/RESULTS.md agrees with the results files it quotes.

    python benchmarks/check_results.py           # exit 1, naming each disagreement, if it does not
    python benchmarks/check_results.py --write   # first rewrite the page's generated tables

The results files (``results/NAME.json``, written by the benchmark scripts) are the
measurements; RESULTS.md only quotes them, in two forms the check can read:

- a figure is a Markdown link to the results file that holds it, titled with its key:
  ``[40.4](results/scale.json "rows_299285.ours.whole_seconds / 60") min``. The key is a
  dotted path into the JSON (a list item by its index, ``*`` for every item, ``a:b`` for a
  slice), optionally inside ``min()``, ``max()``, ``mean()``, ``sum()`` or ``len()``, then
  optionally arithmetic with numbers, applied left to right (`` / 60``, `` * 100``). A key
  ending in `` @COMMIT`` reads the file as git holds it at that commit: a figure of an
  earlier run. The link's text is the figure, and must be the value rounded to as many
  decimals as the text shows.
- a table between ``<!-- begin NAME -->`` and ``<!-- end NAME -->`` is generated: ``render``
  draws it from the results files with the benchmark's own code; ``--write`` rewrites it,
  the check compares it.

Any other decimal number in the page is reported as a figure without a source, except in
code spans, headings, the text of links to other sources, and between
``<!-- begin quoted: WHY -->`` and ``<!-- end quoted -->``, where the page quotes figures no
results file holds and says where they come from.
"""
import argparse
import json
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from runner import HERE, REPO, RESULTS  # noqa: E402

PAGE = HERE / "RESULTS.md"
LINK = re.compile(r"\[([^\]\n]*)\]\(([^)\s]+)(?:\s+\"([^\"]*)\")?\)")
FIGURE_TEXT = re.compile(r"-?\d{1,3}(,\d{3})*(\.\d+)?$|-?\d+(\.\d+)?$")
KEY = re.compile(r"^(?:(min|max|mean|sum|len)\((.+)\)|([^\s()]+))((?:\s+[-+*/]\s+[\d.e+-]+)*)(?:\s+@([0-9a-f]{7,40}))?$")
BARE = re.compile(r"(?<![\w.])-?\d+\.\d+(?![\w.])")
SECTION = re.compile(r"Section \d+(\.\d+)+")
BEGIN = re.compile(r"^<!-- begin ([\w-]+) -->$")
QUOTED = re.compile(r"^<!-- begin quoted: .+ -->$")


class Disagreement(Exception):
    """A figure whose key cannot be read, or a results file that is not there."""


@cache
def results(name: str, commit: str | None = None) -> dict:
    """A results file (``results/NAME.json``), as it is, or as git holds it at ``commit``."""
    if commit is None:
        path = RESULTS / name
        if not path.exists():
            raise Disagreement(f"results/{name} is not there")
        return json.loads(path.read_text())
    done = subprocess.run(["git", "show", f"{commit}:benchmarks/results/{name}"], cwd=REPO,
                          capture_output=True, text=True)
    if done.returncode:
        raise Disagreement(f"results/{name} at {commit}: {done.stderr.strip() or 'git failed'}")
    return json.loads(done.stdout)


def lookup(data, path: str):
    """The value (or, through ``*`` and slices, the list of values) at a dotted path."""
    values, spread = [data], False
    for part in path.split("."):
        step = []
        for v in values:
            if part == "*":
                step += list(v.values()) if isinstance(v, dict) else list(v)
                spread = True
            elif isinstance(v, list) and re.fullmatch(r"-?\d*:-?\d*", part):
                a, b = (int(x) if x else None for x in part.split(":"))
                step += v[a:b]
                spread = True
            elif isinstance(v, list) and re.fullmatch(r"-?\d+", part):
                step.append(v[int(part)])
            elif isinstance(v, dict) and part in v:
                step.append(v[part])
            else:
                raise Disagreement(f"no '{part}' in '{path}'")
        values = step
    return values if spread else values[0]


def as_number(v) -> float:
    """A figure as a float (results files hold some as text, e.g. a parsed R-hat '1.004')."""
    if isinstance(v, bool) or v is None:
        raise Disagreement(f"{v!r} is not a figure")
    try:
        return float(v)
    except (TypeError, ValueError):
        raise Disagreement(f"{v!r} is not a figure") from None


def evaluate(name: str, key: str) -> float:
    """The figure a link's key names in results file ``name``."""
    m = KEY.match(key.strip())
    if not m:
        raise Disagreement(f"cannot read the key '{key}'")
    function, inner, plain, arithmetic, commit = m.groups()
    value = lookup(results(name, commit), inner or plain)
    if function == "len":
        value = len(value)
    elif function:
        numbers = [as_number(v) for v in (value if isinstance(value, list) else [value])]
        if not numbers:
            raise Disagreement(f"'{inner}' holds no value")
        value = {"min": min, "max": max, "sum": sum, "mean": lambda x: sum(x) / len(x)}[function](numbers)
    elif isinstance(value, list):
        raise Disagreement(f"'{plain}' holds several values; name one, or use min(), max(), mean()")
    value = as_number(value)
    for op, operand in re.findall(r"([-+*/])\s+([\d.e+-]+)", arithmetic or ""):
        x = float(operand)
        value = {"+": value + x, "-": value - x, "*": value * x, "/": value / x}[op]
    return value


def agrees(text: str, value: float) -> bool:
    """Whether ``text`` is ``value`` rounded to the decimals the text shows."""
    shown = float(text.replace(",", ""))
    decimals = len(text.split(".")[1]) if "." in text else 0
    return abs(value - shown) <= 0.5 * 10 ** -decimals * (1 + 1e-9) + 1e-12


def check_figures(lines: list[str]) -> list[str]:
    """Every link to a results file: its figure against its key. Every other decimal outside
    code spans, headings, links and quoted regions: a figure without a source."""
    problems, quoted = [], False
    for number, line in enumerate(lines, 1):
        quoted = (quoted or bool(QUOTED.match(line))) and line != "<!-- end quoted -->"
        if line.startswith("#"):
            continue
        prose = re.sub(r"`[^`]*`", "", line)
        for m in LINK.finditer(prose):
            text, target, key = m.groups()
            if not re.fullmatch(r"results/[\w.-]+\.json", target):
                continue
            where = f"RESULTS.md:{number}: [{text}]({target})"
            if not key:
                problems.append(f"{where} names no key (its link's title)")
            elif not FIGURE_TEXT.fullmatch(text):
                problems.append(f"{where}: the link's text is not a figure")
            else:
                try:
                    value = evaluate(target.removeprefix("results/"), key)
                except Disagreement as exc:
                    problems.append(f"{where} \"{key}\": {exc}")
                    continue
                if not agrees(text, value):
                    problems.append(f"{where} \"{key}\": the file says {value:.6g}")
        if quoted:
            continue
        rest = SECTION.sub("", LINK.sub("", prose))
        problems += [f"RESULTS.md:{number}: '{b.group()}' cites no results file: write it as a link to "
                     "its file and key" for b in BARE.finditer(rest)]
    return problems


def blocks(lines: list[str]) -> list[tuple[str, int, int]]:
    """(name, first line, end marker line) of each generated table, 0-based."""
    out = []
    for i, line in enumerate(lines):
        m = BEGIN.match(line)
        if m:
            end = next((j for j in range(i + 1, len(lines)) if lines[j] == f"<!-- end {m.group(1)} -->"), None)
            if end is None:
                raise SystemExit(f"RESULTS.md:{i + 1}: <!-- begin {m.group(1)} --> has no end marker")
            out.append((m.group(1), i + 1, end))
    return out


def render(name: str) -> list[str]:
    """The generated table NAME, from the results files."""
    import mixing
    import peers
    import reports

    tables = {
        "peers-figures": lambda: peers.verdicts_table(results("peers.json")),
        "peers-figure4": lambda: peers.figure4_table(results("peers.json")),
        "peers-outliers": lambda: peers.outlier_table(results("peers.json")),
        "peers-auto": lambda: peers.auto_table(results("peers-auto.json")),
        "mixing": lambda: mixing.convergence_table(results("mixing.json")),
        "reports": lambda: reports.summary_table(results("reports.json")),
    }
    if name not in tables:
        raise Disagreement(f"no generated table '{name}' (known: {', '.join(tables)})")
    return tables[name]()


def check_blocks(lines: list[str], write: bool) -> tuple[list[str], list[str]]:
    """Each generated table against a fresh rendering; with ``write``, replaced by it."""
    problems = []
    for name, first, end in reversed(blocks(lines)):
        try:
            fresh = render(name)
        except Disagreement as exc:
            problems.append(f"RESULTS.md:{first}: {exc}")
            continue
        if write:
            lines[first:end] = fresh
        elif lines[first:end] != fresh:
            problems.append(f"RESULTS.md:{first + 1}: the table '{name}' differs from its results file "
                            "(python benchmarks/check_results.py --write renders it again)")
    return lines, problems


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", action="store_true", help="rewrite the generated tables from the results files first")
    args = ap.parse_args(argv)
    lines = PAGE.read_text().split("\n")
    lines, problems = check_blocks(lines, args.write)
    if args.write:
        PAGE.write_text("\n".join(lines))
    generated = {i for _, first, end in blocks(lines) for i in range(first, end)}
    problems += check_figures([("" if i in generated else line) for i, line in enumerate(lines)])
    for p in sorted(problems, key=lambda p: int(re.match(r"RESULTS.md:(\d+)", p).group(1))):
        print(p)
    print(f"RESULTS.md: {len(problems)} disagreement(s) with the results files" if problems else
          "RESULTS.md agrees with the results files")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
