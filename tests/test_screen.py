"""What Python accepts is what is checked: CPython's compiler screens every file, and no file
takes the parser longer than the budget per file."""

import ast
import json
import sys
import time

import libcst
import pytest

from aliaslint import check_source
from aliaslint.cli import main
from aliaslint.engine import check_notebook
from aliaslint.screen import _ROOM, NODE_WORK, PARSE_BUDGET, RUNNING, deeply, parse_work

FINDING = "a = torch.ones(2)\nprint(id(a) == id(a))\n"


def found(source, **options):
    return [(d.code, d.location.row, d.location.column, d.message)
            for d in check_source(source, "m.py", **options)]


def cpython_error(source: str, flags: int = 0) -> tuple[str, int, int]:
    try:
        compile(source, "<test>", "exec", flags, dont_inherit=True)
    except SyntaxError as error:
        return f"{type(error).__name__}: {error.msg}", error.lineno or 0, error.offset or 0
    raise AssertionError("compiles")


@pytest.mark.parametrize(("body", "message", "row", "column"), [
    ("def f(x, x):\n    pass\n", "SyntaxError: duplicate argument 'x' in function definition",
     2, 10),
    ("for a in b:\n    pass\nbreak\n", "SyntaxError: 'break' outside loop", 4, 1),
    ("x = 1\nfrom __future__ import annotations\n",
     "SyntaxError: from __future__ imports must occur at the beginning of the file", 3, 1),
    ("return torch\n", "SyntaxError: 'return' outside function", 2, 1),
    ("nonlocal x\n", "SyntaxError: nonlocal declaration not allowed at module level", 2, 1),
    ("def f():\n    await x\n", "SyntaxError: 'await' outside async function", 3, 5),
    ("await x\n", "SyntaxError: 'await' outside function", 2, 1),
    ("x = " + "(" * 1000 + "1" + ")" * 1000 + "\n", "SyntaxError: too many nested parentheses",
     2, 205),
    ("x = 1\nx = = 1\n", "SyntaxError: invalid syntax", 3, 5),
    ("if x:\n        a = 1\n\tb = 2\n",
     "TabError: inconsistent use of tabs and spaces in indentation", 4, 1),
])
def test_what_python_rejects_is_an_error_with_its_message_and_location(body, message, row,
                                                                      column):
    source = "import torch\n" + body + FINDING
    assert cpython_error(source) == (message, row, column)
    assert found(source) == [("AL902", row, column, message)]


def test_a_syntax_error_is_reported_even_where_no_rule_could_fire():
    assert found("import torch\nbreak\n", rules=["AL402"]) == [
        ("AL902", 2, 1, "SyntaxError: 'break' outside loop")]


@pytest.mark.parametrize("source", [
    "import torch\nif torch:\n    pass\n\\\nelse:\n    pass\n" + FINDING,
    "import torch\r\n" + FINDING.replace("\n", "\r\n") + "\\\r\n",
])
def test_what_python_accepts_and_libcst_tokenizes_differently_is_checked(source):
    compile(source, "<test>", "exec", dont_inherit=True)
    with pytest.raises(libcst.ParserSyntaxError):
        libcst.parse_module(source)
    rows = [(code, row) for code, row, _, _ in found(source)]
    assert rows == [("AL401", source.replace("\r\n", "\n").count("\n", 0, source.find("id(")) + 1)]


def test_exit_status_and_row_of_a_syntax_error(project, capsys):
    (project / "m.py").write_text("import torch\nx = = 1\n")
    assert main(["check", "--output-format", "concise", "--no-cache"]) == 2
    assert capsys.readouterr().out.splitlines()[0] == (
        "m.py:2:5: AL902 SyntaxError: invalid syntax")


# --- the target version ---------------------------------------------------------------------

def test_target_version_older_than_python_rejects_newer_syntax():
    source = "import torch\nmatch x:\n    case 1:\n        pass\n" + FINDING
    assert [code for code, *_ in found(source, target_version=(3, 10))] == ["AL401"]
    with pytest.raises(SyntaxError) as error:
        compile(source, "<test>", "exec", ast.PyCF_ONLY_AST, _feature_version=9)
    assert found(source, target_version=(3, 9)) == [
        ("AL902", error.value.lineno, max(error.value.offset or 1, 1),
         "SyntaxError: Pattern matching is only supported in Python 3.10 and greater")]


@pytest.mark.skipif(RUNNING >= (3, 12), reason="needs a Python older than 3.12")
def test_target_version_newer_than_python_leaves_new_syntax_to_the_parser():
    source = "import torch\ntype Pair = tuple[int, int]\n" + FINDING
    assert found(source) == [("AL902", 2, 6, "SyntaxError: invalid syntax")]
    assert [code for code, *_ in found(source, target_version=(3, 12))] == ["AL401"]
    # what no Python accepts is still an error, in the parser's words
    ((code, row, _, message),) = found("import torch\nx = = 1\n", target_version=(3, 12))
    assert (code, row) == ("AL902", 2) and message.startswith("syntax error (libcst's parser)")


def test_target_version_setting(project, capsys):
    (project / "m.py").write_text("import torch\nmatch x:\n    case 1:\n        pass\n")
    assert main(["check", "--no-cache", "--target-version", "py39"]) == 2
    assert "Pattern matching is only supported" in capsys.readouterr().out
    (project / "aliaslint.toml").write_text('target-version = "py39"\n')
    assert main(["check", "--no-cache"]) == 2
    assert main(["check", "--target-version", "py310"]) == 0  # cached under another key
    (project / "aliaslint.toml").write_text('target-version = "3.9"\n')
    assert main(["check", "--no-cache"]) == 2
    assert "target-version: expected a Python version such as 'py311', got '3.9'" in (
        capsys.readouterr().err)
    with pytest.raises(SystemExit):
        main(["check", "--target-version", "python3"])
    assert "expected a Python version such as py311" in capsys.readouterr().err


# --- notebooks --------------------------------------------------------------------------------

def notebook(*cells: str) -> str:
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "source": cell, "metadata": {}, "outputs": [],
         "execution_count": None} for cell in cells]})


def test_notebook_cells_compile_alone_with_top_level_await():
    text = notebook("import torch\na = torch.ones(2)", "await setup()\nprint(id(a) == id(a))",
                    "x = 1\nx = = 1", "def f():\n    await x", "from __future__ import annotations")
    assert [(d.cell, d.location.row, d.location.column, d.code, d.message)
            for d in check_notebook(text, "n.ipynb")] == [
        (2, 2, 7, "AL401", check_source("import torch\n" + FINDING, "m.py")[0].message),
        (3, 2, 5, "AL902", "SyntaxError: invalid syntax"),
        (4, 2, 5, "AL902", "SyntaxError: 'await' outside async function"),
    ]


# --- the time budget --------------------------------------------------------------------------

CHAIN = "c = a" + ".add(1)" * 1000 + "\n"  # about as deep as CPython compiles


@pytest.mark.parametrize(("source", "message"), [
    ("c = a" + ".add(1)" * 3000 + "\n",
     "maximum recursion depth exceeded"),
    ("c = " + "+".join(["a"] * 5000) + "\n",
     "maximum recursion depth exceeded"),
    ("c = " + "f(" * 800 + "1" + ")" * 800 + "\n", "too many nested parentheses"),
])
def test_what_python_cannot_compile_is_answered_at_once(source, message):
    source = "import torch\n" + source + FINDING
    with pytest.raises((SyntaxError, RecursionError)) as error:
        compile(source, "<test>", "exec", dont_inherit=True)
    assert message in str(error.value)
    start = time.process_time()
    ((code, _, _, reported),) = found(source)
    assert code == "AL902" and message in reported
    screening = time.process_time() - start
    start = time.process_time()
    libcst.parse_module("c = a" + ".add(1)" * 200 + "\n")
    # less than the parser spends on a chain a fifteenth as long
    assert screening < time.process_time() - start


def test_a_file_over_the_parse_budget_is_reported_not_parsed():
    source = "import torch\n" + CHAIN * 4 + FINDING
    compile(source, "<test>", "exec", dont_inherit=True)  # Python accepts it
    work = parse_work(ast.parse(source))
    assert (work.units, work.deepest, work.row, work.nodes) == (12_016_049, 2001, 2, 12_032)
    assert work.total == 12_016_049 + NODE_WORK * 12_032 > PARSE_BUDGET
    assert found(source) == [(
        "AL902", 2, 1,
        "too costly to parse within the `parse-budget` per file: its expressions nest too "
        "deeply (parse work 12,978,609, budget 10,000,000; the work grows with the square of "
        "an expression's depth, and the deepest, 2,001 levels, is on line 2; raise "
        "`parse-budget` to check it)")]
    # The least of a few runs: a collection triggered by the rest of a long test session
    # lands in one of them, not in the cost of screening.
    screening = min(_cpu(lambda: found(source)) for _ in range(3))
    assert screening * 5 < _cpu(lambda: libcst.parse_module(CHAIN))  # < a fifth of one statement


@pytest.mark.parametrize("source", [
    "import torch\nx = torch.ones(3); y = x.add_(1)\nx = torch.ones(3); y = x[1:2]\n",
    "@torch.no_grad()\n@staticmethod\ndef f(x):\n    return x.mul_(2)\n\n"
    "def f(x):\n    return x.mul_(2)\n",
    "class M:\n    w = [[1, 2], [3, [4, 5]]]\n\n    def forward(self, x):\n"
    "        return (x + 1) * (x - 1) / 2\n",
    "s = '\u00e9t\u00e9'; t = f(g(h('\u00e9')))\n",  # columns count bytes, not characters
])
def test_the_budget_from_each_statements_work_is_the_whole_walks(source):
    """The total the budget compares is the whole tree's, each top-level statement's
    share looked up by its text and place: again with every share known, and with the same
    statements at other rows."""
    from aliaslint.screen import _total_work

    for text in (source, source, "\n\n" + source, source + source):
        tree = ast.parse(text)
        assert _total_work(tree, text) == parse_work(tree).total


def test_the_budget_counts_rows_as_python_does():
    """A form feed (a page break in old code) is no line break for CPython: two statements
    of different work at the same place after one must not share their share."""
    from aliaslint.screen import _total_work

    for text in ("\x0c\ny = f(g(h(1)))\n", "\x0c\ny = 3333333333\n"):
        tree = ast.parse(text)
        assert _total_work(tree, text) == parse_work(tree).total


def _cpu(function) -> float:
    start = time.process_time()
    function()
    return time.process_time() - start


def test_the_deepest_expression_python_compiles_is_analysed():
    limit = sys.getrecursionlimit()
    assert found("import torch\n" + CHAIN + FINDING)[0][:2] == ("AL401", 4)
    assert sys.getrecursionlimit() == limit


def test_deeply_returns_and_raises_as_the_call_would():
    assert deeply(lambda: sys.getrecursionlimit()) >= 30_000
    with pytest.raises(ZeroDivisionError):
        deeply(lambda: 1 // 0)


def test_a_notebook_over_the_parse_budget_in_all_its_cells():
    cells = ["import torch\na = torch.ones(2)"] + ["c = a" + ".add(1)" * 700] * 7
    ((cell, row, code, message),) = [(d.cell, d.location.row, d.code, d.message)
                                     for d in check_notebook(notebook(*cells), "n.ipynb")]
    assert (cell, row, code) == (2, 1, "AL902")
    assert message.startswith("too costly to parse within the `parse-budget` per file") and (
        "parse work 11,488,025" in message and "the deepest, 1,401 levels" in message)
    assert [d.code for d in check_notebook(notebook(*cells[:4]), "n.ipynb")] == []


def test_deeply_inside_deeply_and_after_a_fork():
    import os

    assert deeply(lambda: deeply(lambda: 7)) == 7
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the deep thread did not survive the fork: the child gets its own
        os.write(write, str(deeply(lambda: 8)).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        assert pipe.read() == "8"
    os.waitpid(pid, 0)


# An edited buffer's statements that compiled before are not compiled again: each edit below
# is screened with and without that memory, and Python's verdict (message and position) is
# the same either way.  The errors past the parser that reach beyond one statement are the
# reason the whole module is compiled where a `global`, `nonlocal` or future import stands
# at the top level.
_MODEL = '''\
import torch
import torch.nn as nn


def scale(x, factor=2.0):
    return x * factor


@torch.no_grad()
def update(ema, model, decay=0.99):
    for a, b in zip(ema.parameters(), model.parameters()):
        a.mul_(decay).add_(b, alpha=1 - decay)


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        return self.fc(x).relu()
'''
_EDITS = [
    ("factor=2.0", "factor=3.0"),  # compiles
    ("return x * factor", "break"),  # `break` outside a loop (code generation)
    ("def scale(x, factor=2.0):", "def scale(x, x=2.0):"),  # duplicate argument (symbols)
    ("@torch.no_grad()\ndef update", "@torch.no_grad()\nasync def update"),  # compiles
    ("        return self.fc(x).relu()", "        nonlocal width\n        return x"),
    ("import torch\n", "import torch\nfrom __future__ import annotations\n"),  # late
    ("import torch\n", "import torch\nx = 1\nglobal x\n"),  # assigned before global
    ("    return x * factor", "    return x * factor\nreturn None"),  # outside a function
    ("decay=0.99", "decay=0.999"),  # compiles again
]


@pytest.mark.parametrize("old, new", _EDITS)
def test_an_edited_buffer_compiles_only_its_changed_statements_to_the_same_verdict(old, new):
    from aliaslint.screen import screen

    known: set[str] = set()
    assert screen(_MODEL, "m.py", statements=known).error is None
    assert len(known) == 5  # two imports, two functions, the class: each compiled once
    edited = _MODEL.replace(old, new, 1)
    assert edited != _MODEL
    alone, remembered = screen(edited, "m.py"), screen(edited, "m.py", statements=known)
    assert (alone.error is None) == (remembered.error is None)
    if alone.error is not None:
        assert remembered.error is not None
        assert (remembered.error.message, remembered.error.location) == \
            (alone.error.message, alone.error.location)
    else:
        assert len(known) >= 5 and ast.dump(remembered.tree) == ast.dump(alone.tree)
    assert (alone.error is None) == _compiles(edited)


def _compiles(source: str) -> bool:
    try:
        compile(source, "<test>", "exec", dont_inherit=True)
    except SyntaxError:
        return False
    return True


def test_a_buffer_whose_statements_all_compiled_before_is_not_compiled_again(monkeypatch):
    import builtins

    from aliaslint.screen import screen

    known: set[str] = set()
    screen(_MODEL, "m.py", statements=known)
    compiled = []
    real = builtins.compile

    def counting(source, *args, **kwargs):
        compiled.append(type(source).__name__)
        return real(source, *args, **kwargs)

    monkeypatch.setattr(builtins, "compile", counting)
    assert screen(_MODEL, "m.py", statements=known).error is None
    assert compiled == ["str"]  # the tree only; no statement compiled again
    compiled.clear()
    assert screen(_MODEL.replace("2.0", "4.0"), "m.py", statements=known).error is None
    assert compiled == ["str", "Module"]  # the tree, then the one edited statement


def test_deep_calls_run_above_a_frame_that_leaves_room_for_deep_analyses():
    # Frames of a deep analysis then share one large chunk of CPython's frame stack instead
    # of mapping and unmapping a small one each time their depth crosses a chunk's end.
    def room_below() -> bool:
        frame = sys._getframe()
        while frame is not None:
            if frame.f_code.co_stacksize >= _ROOM:
                return True
            frame = frame.f_back
        return False

    assert deeply(room_below)
    assert not room_below()
