"""Every refusal is one short line (issue 36): the fixed text of each InputError message in
the product leaves room for a column or file name within MAX_MESSAGE characters, and files
are named by their base name."""
import ast
from pathlib import Path

import pytest

from mixsynth.tableio import MAX_MESSAGE, InputError, read_table

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("mixsynth", "assets", "resources", "pipeline")
ROOM = 50   # characters left for the names and counts a message quotes


def _fixed_text(node: ast.expr) -> str:
    """The literal parts of a message expression, each placeholder as '{}'."""
    if isinstance(node, ast.Constant):
        return str(node.value)
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    if isinstance(node, ast.BinOp):
        return _fixed_text(node.left) + _fixed_text(node.right)
    return "{}"


def _messages():
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)
                        and getattr(node.exc.func, "id", "") == "InputError" and node.exc.args):
                    yield f"{path.relative_to(ROOT)}:{node.lineno}", _fixed_text(node.exc.args[0])


def test_every_message_template_fits_one_short_line():
    found = list(_messages())
    assert len(found) > 100                     # the walk sees the product's messages
    long = [(where, len(text)) for where, text in found if len(text) > MAX_MESSAGE - ROOM]
    assert not long, long


@pytest.mark.parametrize("content", ["a,b,a\n1,2,3\n4,5,6\n", "a,b\n1,2\n3,4,5\n"])
def test_file_errors_name_the_base_name_only(tmp_path, content):
    folder = tmp_path / ("deep" * 40)
    folder.mkdir()
    path = folder / "wave-2026.csv"
    path.write_text(content)
    with pytest.raises(InputError) as info:
        read_table(path)
    msg = str(info.value)
    assert "'wave-2026.csv'" in msg and str(folder) not in msg and len(msg) <= MAX_MESSAGE
