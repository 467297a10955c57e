"""benchmarks/RESULTS.md agrees with the results files it quotes, and the benchmark scripts
share one runner: none imports another, and each answers --help."""
import ast
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
import check_results  # noqa: E402

SCRIPTS = sorted(p.stem for p in BENCHMARKS.glob("*.py") if p.stem not in ("runner", "check_results"))


def test_the_results_page_agrees_with_the_results_files():
    done = subprocess.run([sys.executable, str(BENCHMARKS / "check_results.py")], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_figure_that_disagrees_with_its_file_is_named():
    line = ('fit [254](results/core.json "fit.wall_seconds @e6301b2") s and '
            '[7.7](results/core.json "synthesis.seconds_median @e6301b2") s')
    assert check_results.check_figures([line]) == []
    wrong = line.replace("[254]", "[260]")
    assert [p.split(":")[1] for p in check_results.check_figures(["", wrong])] == ["2"]


def test_a_key_is_read_through_lists_functions_and_units():
    assert check_results.check_figures(['[19.9](results/small.json "min(runs.0:6.wall_seconds)")',
                                        '[40.4](results/scale.json "rows_299285.ours.whole_seconds / 60")']) == []
    assert "no 'nope'" in check_results.check_figures(['[1.0](results/core.json "fit.nope")'])[0]


def test_a_decimal_that_cites_no_file_is_named_outside_quoted_regions():
    assert "cites no results file" in check_results.check_figures(["the fit took 254.0 s"])[0]
    assert check_results.check_figures(["`254.0` in code, the paper's Section 6.4", "# 1.5 in a heading",
                                        "<!-- begin quoted: not ours -->", "the paper's 0.107",
                                        "<!-- end quoted -->"]) == []


def test_a_generated_table_that_differs_from_its_file_is_named():
    lines = check_results.PAGE.read_text().split("\n")
    name, first, end = check_results.blocks(lines)[0]
    lines[first + 2] = lines[first + 2].replace("|", "| 9.99 |", 1)
    _, problems = check_results.check_blocks(lines, write=False)
    assert problems and f"'{name}'" in problems[0]


def test_no_benchmark_imports_another():
    """The scripts import the runner and nothing else of this folder (no import cycle)."""
    imports = {}
    for name in SCRIPTS + ["runner"]:
        tree = ast.parse((BENCHMARKS / f"{name}.py").read_text())
        found = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        found |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        imports[name] = found & set(SCRIPTS + ["runner", "check_results"])
    assert imports.pop("runner") == set()
    assert all(found == {"runner"} for found in imports.values()), imports


@pytest.mark.parametrize("script", SCRIPTS)
def test_each_benchmark_answers_help(script):
    done = subprocess.run([sys.executable, str(BENCHMARKS / f"{script}.py"), "--help"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("usage:"), done.stderr
