"""The engine's shortcuts (prefilter, worker pool) never change what is found."""

import ast
import dataclasses
import json
from pathlib import Path

import pytest

from aliaslint import engine, registry
from aliaslint.catalog import load_docs
from aliaslint.checks.al402_is_sharing_check import code_has_is
from aliaslint.engine import check_notebook, check_source

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "fixtures").rglob("*.py")) + sorted((ROOT / "fixtures").rglob("*.ipynb"))
CODES = sorted(code for code, rule in registry.rules().items() if rule.checks)


def _examples():
    for rule in load_docs().values():
        for index, example in enumerate(rule.examples):
            yield f"{rule.code}-{example.kind}-{index}", example.source


def _check(name: str, text: str, rules):
    if name.endswith(".ipynb"):
        return check_notebook(text, name, rules)
    return check_source(text, name, rules)


@pytest.mark.parametrize("rules", [CODES, *([code] for code in CODES), ["AL401", "AL901"]],
                         ids=lambda rules: "+".join(rules))
def test_prefilter_loses_no_finding(rules, monkeypatch):
    """Every fixture and rule example, with each rule alone and all together, finds the
    same with the word prefilter as without it."""
    cases = [(path.name, path.read_text(encoding="utf-8")) for path in SOURCES]
    cases += [(f"{name}.py", source) for name, source in _examples()]
    with_prefilter = [_check(name, text, rules) for name, text in cases]
    monkeypatch.setattr(engine, "may_find", lambda source, enabled, quiet=None, **_: True)
    without = [_check(name, text, rules) for name, text in cases]
    assert with_prefilter == without
    assert any(with_prefilter)


def test_prefilter_skips_files_without_the_words_but_not_their_syntax_errors(monkeypatch):
    parsed = []
    real = engine._parse
    monkeypatch.setattr(engine, "_parse", lambda s, f, *r, **o: parsed.append(f) or real(s, f, *r, **o))
    quiet = "import torch\n'''this is a docstring'''\nx = torch.ones(2)  # is it?\n"
    assert check_source(quiet, "q.py", ["AL402"]) == [] and parsed == []
    # Python's compiler finds the error; nothing is parsed into a CST.
    (error,) = check_source(quiet + "def f(:\n", "broken.py", ["AL402"])
    assert (error.code, error.message, error.location.row) == (
        "AL902", "SyntaxError: invalid syntax", 4) and parsed == []
    # a rule that declares no words makes every torch file a candidate
    assert engine.may_find(quiet, frozenset({"AL402", "AL101"}))


def test_a_file_that_writes_needs_no_words_tested(monkeypatch):
    # A file whose own outline spells a write cannot be proven quiet: the default rules
    # without words may fire there, so the prefilter answers before testing any rule's words.
    from aliaslint import registry
    from aliaslint.outline import outline

    tested = []
    briefs = {code: brief if brief.words is None else dataclasses.replace(
        brief, words=lambda text, words=brief.words: tested.append(1) or words(text))
        for code, brief in registry.briefs().items()}
    monkeypatch.setattr(registry, "briefs", lambda: briefs)
    enabled = frozenset(briefs)
    writes = "import torch\nx = torch.ones(2)\nx.add_(1)  # is it a view? id(x)\n"
    reads = "import torch\nx = torch.ones(2)\ny = x.sum()  # storage of x is y\n"
    for source in (writes, reads):
        own = outline(ast.parse(source))
        proof = lambda own=own: engine._quiet(None, own, None)  # noqa: E731
        tested.clear()
        found = engine.may_find(source, enabled, proof, writes=not own.writes_nothing)
        assert (len(tested) > 0) is own.writes_nothing  # words asked of `reads` only
        assert found == engine.may_find(source, enabled, proof)


@pytest.mark.parametrize(("source", "has_is"), [
    ("x = 1 if a is None else 2", False),
    ("a is not None and b is True", False),
    ('"""this is doc"""\nx = a is b', True),
    ("# this is\ny = 'it is'", False),
    ("s = 'it\\'s' + \"is\"", False),
    ("if x in\"is it\": pass", False),
    ("r'\\' is' + rb'is' + br'is'", False),
    ("'''a\nis b'''\nc = d", False),
    ("type(a) is int", True),
    ('f"it is {y}"', False),
    ('f"{a is b}"', True),
    ('f"{x["k"] is b}"', True),  # Python 3.12 nested quotes: the field is cut, so it counts
    ("x = 'unterminated is", True),
])
def test_code_has_is(source, has_is):
    assert code_has_is(source) is has_is


def test_jobs_do_not_change_the_output(tmp_path):
    for index, path in enumerate(SOURCES * 3):
        (tmp_path / f"{index}{path.suffix}").write_bytes(path.read_bytes())
    one = engine.check_paths([str(tmp_path)], jobs=1, cwd=tmp_path)
    two = engine.check_paths([str(tmp_path)], jobs=2, cwd=tmp_path)
    assert one.diagnostics == two.diagnostics and one.diagnostics
    assert [d.to_json() for d in two.diagnostics] == json.loads(
        json.dumps([d.to_json() for d in one.diagnostics]))
