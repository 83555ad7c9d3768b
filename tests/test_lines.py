"""One definition of a line: CPython's (``\\n``, ``\\r\\n``, a lone ``\\r``), the same for the
parser's positions, the fixer, the code excerpts, suppressions and the language server."""

from __future__ import annotations

import ast
import codecs
import difflib
import re
import subprocess
import sys

import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aliaslint import registry
from aliaslint.cli_output import lines_of
from aliaslint.diagnostics import Edit, Position
from aliaslint.engine import check_source
from aliaslint.fixes import _edited_cell, apply_edits, fix_bytes
from aliaslint.lines import Lines, first_break, split, split_keepends, usual_break
from aliaslint.rule import Context
from aliaslint.server.convert import Converter, Text
from aliaslint.suppressions import parse_suppressions

ALL = sorted(registry.rules())

# A training step with a hazard on each of three rules' fixes, one of which adds a line.
STEP = [
    "import torch",
    "from torch import nn",
    "model = nn.Linear(4, 3)",
    "opt = torch.optim.SGD(model.parameters(), lr=0.1)",
    "x = torch.randn(8, 4)",
    "best = model.state_dict()",
    "# a comment with a form feed \f, a vertical tab \v, \x1c and \u2028 in it",
    "probs = torch.softmax(model(x), dim=1)",
    "target = probs.detach()",
    "target.pow_(2)",
    "loss = -(target * probs.log()).sum()",
    "loss.backward()",
    "opt.step()",
    "flat = x.t().view(-1)",
    "print(best['weight'], flat.sum())",
]
# Each hazard line and what the unsafe fixes make of it.
FIXED = {
    "best = model.state_dict()": "best = copy.deepcopy(model.state_dict())",
    "target.pow_(2)": "target = target.pow(2)",
    "flat = x.t().view(-1)": "flat = x.t().reshape(-1)",
}

ISSUE_REPRODUCER = (b"#a\rb = 1\n#c\rd = 2\nimport torch\nw = torch.randn(3, requires_grad=True)\n"
                    b"y = w.sigmoid()\ny.mul_(2)\ny.sum().backward()\n")


def _unsafe(d) -> bool:
    return d.fix is not None and d.fix.applicability != "display-only"


def _fix(data: bytes):
    return fix_bytes(data, ".py", "m.py", lambda text: check_source(text, "m.py", ALL), _unsafe)


@given(st.text(alphabet=st.sampled_from(list("ab \r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029\t"))))
@settings(max_examples=400, deadline=None, derandomize=True)
def test_rows_are_cut_at_cpythons_breaks_only(text):
    # The rows of a text with no break but CPython's are str.splitlines's; the others are
    # cut by the line-break pattern: both ways the same as a cut at each break found.
    ends = [match.end() for match in re.finditer(r"\r\n|\r|\n", text)]
    bounds = [0, *ends] + ([len(text)] if not ends or ends[-1] != len(text) else [])
    assert split_keepends(text) == [text[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]


def test_lines_break_where_cpython_does():
    text = "a\r\nb\rc\nd\fe\vf\x1cg\x85h\u2028i"
    assert split(text) == ["a", "b", "c", "d\fe\vf\x1cg\x85h\u2028i"]
    assert split_keepends(text) == ["a\r\n", "b\r", "c\n", "d\fe\vf\x1cg\x85h\u2028i"]
    assert split_keepends("a\n") == ["a\n"] and split("a\n") == ["a", ""]
    assert split_keepends("") == [] and first_break("x\ry\r\n") == "\r" and first_break("x") == "\n"
    # The rows CPython gives the statements.
    assert [s.lineno for s in ast.parse(text.replace("\f", "#").replace("\v", "#")
                                          .replace("d", "#d")).body] == [1, 2, 3]


def test_offsets_and_positions_round_trip_and_clamp():
    text = "ab\r\ncd\ref\n"
    lines = Lines(text)
    assert [lines.offset(row, 1) for row in (1, 2, 3, 4)] == [0, 4, 7, 10]
    assert lines.offset(1, 3) == 2  # the end of row 1, before its "\r\n"
    assert lines.offset(1, 99) == 2 and lines.offset(9, 1) == len(text) and lines.offset(0, 5) == 0
    for offset in range(len(text) + 1):
        row, column = lines.position(offset)
        if text[offset - 1:offset + 1] != "\r\n":  # not between the two halves of a break
            assert lines.offset(row, column) == offset


def test_the_reported_reproducer_is_fixed_in_place_once():
    done = _fix(ISSUE_REPRODUCER)
    assert done is not None and done.data == ISSUE_REPRODUCER.replace(b"y.mul_(2)", b"y = y.mul(2)")
    assert _fix(done.data).data is None  # a second --fix changes nothing


def test_the_reported_reproducer_through_the_command_line(tmp_path):
    path = tmp_path / "m.py"
    path.write_bytes(ISSUE_REPRODUCER)
    command = [sys.executable, "-m", "aliaslint", "check", "--isolated", "--no-cache", "--fix",
               "--unsafe-fixes", "m.py"]
    first = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
    assert first.returncode == 0 and "(1 fixed, 0 remaining)" in first.stdout
    assert path.read_bytes() == ISSUE_REPRODUCER.replace(b"y.mul_(2)", b"y = y.mul(2)")
    second = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
    assert second.returncode == 0 and "All checks passed!" in second.stdout
    assert path.read_bytes() == ISSUE_REPRODUCER.replace(b"y.mul_(2)", b"y = y.mul(2)")


def test_only_carriage_returns():
    source = b"import torch\rw = torch.randn(3, requires_grad=True)\ry = w.sigmoid()\r" \
             b"y.mul_(2)\ry.sum().backward()\r"
    done = _fix(source)
    assert done is not None and done.data == source.replace(b"y.mul_(2)", b"y = y.mul(2)")


def test_an_added_line_takes_the_files_usual_line_ending():
    done = _fix("\r".join(STEP).encode() + b"\r")
    assert done is not None and done.data is not None
    assert done.data.startswith(b"import copy\rimport torch\r") and b"\n" not in done.data
    # Mostly "\n" after a first "\r\n": the added line ends with "\n".
    done = _fix(("\r\n".join(STEP[:2]) + "\r\n" + "\n".join(STEP[2:]) + "\n").encode())
    assert done is not None and done.data is not None
    assert done.data.startswith(b"import copy\nimport torch\r\nfrom torch import nn\r\nmodel")
    assert usual_break("a\rb\r\nc\r\nd\r") == "\r" and usual_break("a\rb\nc\n") == "\n"


def test_form_feed_columns_are_cpythons():
    """libcst drops a form feed that indents a statement; the columns it gives that row are
    put back to CPython's, so the caret and the fix sit on the call."""
    source = "import torch\nw = torch.randn(3, requires_grad=True)\ny = w.sigmoid()\n" \
             "\fy.mul_(2)\ny.sum().backward()\n"
    [finding] = check_source(source, "m.py", ALL)
    assert (finding.location, finding.end_location) == (Position(4, 2), Position(4, 11))
    done = _fix(source.encode())
    assert done is not None and done.data == source.replace("y.mul_(2)", "y = y.mul(2)").encode()


ENDINGS = st.sampled_from(["\n", "\r\n", "\r"])


@st.composite
def programs(draw) -> tuple[list[str], list[str], bool]:
    """STEP with random line endings, blank lines and form-feed lines between its lines
    and form feeds before some statements."""
    rows: list[str] = []
    for line in STEP:
        rows.extend(draw(st.lists(st.sampled_from(["", "\f", "# note"]), max_size=2)))
        feed = draw(st.sampled_from(["", "", "\f"])) if not line.startswith("#") else ""
        rows.append(feed + line)
    endings = draw(st.lists(ENDINGS, min_size=len(rows), max_size=len(rows)))
    return rows, endings, draw(st.booleans())


def _join(rows: list[str], endings: list[str]) -> str:
    return "".join(row + ending for row, ending in zip(rows, endings))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_fixes_land_on_their_rows_whatever_the_line_endings(program):
    rows, endings, bom = program
    text = _join(rows, endings)
    # "\r" then an empty row ended by "\n" would read as one "\r\n".
    if len(split_keepends(text)) != len(rows):
        return
    data = (codecs.BOM_UTF8 if bom else b"") + text.encode()
    done = _fix(data)
    assert done is not None and done.data is not None
    assert done.data.startswith(codecs.BOM_UTF8) == bom
    fixed = done.data.decode("utf-8-sig")
    compile(fixed, "m.py", "exec")
    new_rows = split_keepends(fixed)
    # Only the hazard rows change; every other row keeps its text and its own ending.
    matcher = difflib.SequenceMatcher(None, [r.rstrip("\r\n") for r in split_keepends(text)],
                                      [r.rstrip("\r\n") for r in new_rows], autojunk=False)
    changed = []
    for tag, a1, a2, b1, b2 in matcher.get_opcodes():
        if tag == "equal":
            assert split_keepends(text)[a1:a2] == new_rows[b1:b2]
        else:
            changed.append(([r.rstrip("\r\n") for r in split_keepends(text)[a1:a2]],
                            [r.rstrip("\r\n") for r in new_rows[b1:b2]]))
    olds = [row.lstrip("\f") for old, _ in changed for row in old]
    news = [row.lstrip("\f") for _, new in changed for row in new]
    assert sorted(olds) == sorted(FIXED)
    assert sorted(n for n in news if n != "import copy") == sorted(FIXED.values())
    assert "import copy" + usual_break(text) in fixed
    # Fixing again changes nothing.
    assert _fix(done.data).data is None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["x = 1", "y = (x,\f x)", "\fz = x", "# c\f",
                                           "w = 'é😀' + str(x)", ""]), ENDINGS),
                min_size=1, max_size=8))
def test_libcst_positions_agree_with_cpythons(parts):
    source = "".join(row + ending for row, ending in parts)
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return
    module = cst.parse_module(source)
    context = Context(module, source=source)
    names: list[cst.Name] = []

    class Names(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            names.append(node)

    module.visit(Names())
    rows = split(source)
    expected = sorted(
        (node.lineno, len(rows[node.lineno - 1].encode()[:node.col_offset].decode()) + 1)
        for node in ast.walk(tree) if isinstance(node, ast.Name))
    got = sorted((p.row, p.column) for p in (context.location(n)[0] for n in names))
    assert got == expected


def test_code_excerpts_and_suppressions_count_rows_the_same_way():
    source = "a = 1\rb = 2  # noqa: AL101\r\nc = 3\f# not a new row\nd = 4\n"
    assert lines_of(source.encode(), "m.py", None) == \
        ["a = 1", "b = 2  # noqa: AL101", "c = 3\f# not a new row", "d = 4", ""]
    suppressions = parse_suppressions(source)
    assert suppressions.suppresses("AL101", (2, 2))
    assert not suppressions.suppresses("AL101", (1, 1))


@pytest.mark.parametrize("encoding,character", [("utf-16", 11), ("utf-8", 14), ("utf-32", 10)])
def test_the_server_counts_columns_in_the_negotiated_units(encoding, character):
    # Row 2 (after a lone "\r"): `s = "😀é"; y` — the emoji is two UTF-16 units, four bytes.
    text = Text.of("file:///m.py", 'x = 1\rs = "😀é"; y.mul_(2)\n')
    position = Converter(encoding).position(text, Position(2, 11))
    assert (position.line, position.character) == (1, character)


def test_apply_edits_with_every_line_ending():
    text = "a = 1\rb = 2\r\nc = 3\nd = 4"
    edits = [_edit(2, 1, 2, 2, "bb"), _edit(3, 5, 3, 6, "33"), _edit(4, 1, 4, 1, "# x\r")]
    assert apply_edits(text, edits) == "a = 1\rbb = 2\r\nc = 33\n# x\rd = 4"


def _edit(row, column, end_row, end_column, content):
    return Edit(content, Position(row, column), Position(end_row, end_column))


def test_a_notebook_cell_list_is_split_at_line_breaks_only():
    source = ["x = 1  # a form feed \f here\n", "y.mul_(2)\n"]
    edited = _edited_cell(source, [_edit(2, 1, 2, 10, "y = y.mul(2)")])
    assert edited == ["x = 1  # a form feed \f here\n", "y = y.mul(2)\n"]


def test_a_notebook_cell_keeps_the_line_breaks_of_the_rows_a_fix_leaves():
    source = "import torch\r\nw = torch.randn(3, requires_grad=True)\ry = w.sigmoid()\n" \
             "y.mul_(2)\r\ny.sum().backward()"
    edited = _edited_cell(source, [_edit(4, 1, 4, 10, "y = y.mul(2)"),
                                   _edit(6, 1, 6, 1, "print(w.grad)\n")])
    assert edited == source.replace("y.mul_(2)", "y = y.mul(2)") + "\r\nprint(w.grad)"
