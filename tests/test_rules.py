"""Every rule's cases, from tests/rules/ALnnn.py; the fixtures' stated findings; and proof that
one rule module plus one spec is a whole rule.

A case file is plain Python holding one rule's positive and negative cases.  Each line
``# case: <short description>`` starts a case: that line and the ones up to the next case
line are one complete module, linted alone with every rule enabled, rows counted from its
``# case:`` line.  ``# error: ALnnn[, ALmmm]`` at the end of a line marks each finding the
case must produce there, as in the specs (rules/ALnnn.md); naming a code twice on one line
means it fires there exactly twice.  ``# low: ALnnn`` marks a finding reported only with
``--confidence low``.  A case with no marks is a negative case: nothing may
fire.  An optional ``# runs: ok`` or ``# runs: raises SomeError`` line says what running the
case as a script under torch does, and the case is run to check it.  Whatever comes before
the first case line (the file's docstring) is no case.
"""

from __future__ import annotations

import ast
import fnmatch
import json
import re
import sys
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from aliaslint import catalog, check_source, engine, registry, report
from aliaslint.cli import main
from conftest import lint
# The spec test itself (imported under a name pytest does not collect here).
from test_catalog import test_example_fires_exactly_where_marked as spec_example_check

ROOT = Path(__file__).resolve().parent.parent
CASES_DIR = Path(__file__).resolve().parent / "rules"
FIXTURES = ROOT / "fixtures"

_CASE = re.compile(r"^#\s*case:\s*(\S.*?)\s*$")
_RUNS = re.compile(r"^#\s*runs:")
_RUNS_VALUE = re.compile(r"^#\s*runs:\s*(?:(ok)|raises\s+([A-Za-z_][\w.]*))\s*$")
# The spec mark (catalog.marks), read with repeats kept.
_MARK = re.compile(r"#\s*error:\s*(AL\d{3}(?:\s*,\s*AL\d{3})*)\s*$")
_LOW = re.compile(r"#\s*low:\s*(AL\d{3}(?:\s*,\s*AL\d{3})*)\s*$")


@dataclass(frozen=True)
class Case:
    code: str  # the file's code
    slug: str
    source: str
    expected: tuple[tuple[int, str], ...]  # catalog.marks: (row, code), each once
    repeats: tuple[tuple[tuple[int, str], int], ...]  # (row, code) named n > 1 times
    runs: str | None  # None, "ok", or the name of the exception it raises
    path: Path
    low: tuple[tuple[int, str], ...]  # low-confidence findings: (row, code)
    line: int  # of its `# case:` line in the file

    @property
    def id(self) -> str:
        return f"{self.code}-{self.slug}"


def slugify(description: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", description.lower()).strip("-")


def read_cases(path: Path) -> list[Case]:
    lines = path.read_text(encoding="utf-8").splitlines()
    starts = [index for index, line in enumerate(lines) if _CASE.match(line)]
    for line in lines[: starts[0] if starts else len(lines)]:
        if _MARK.search(line) or _RUNS.match(line):
            raise ValueError(f"{path.name}: a mark before the first `# case:` line: {line!r}")
    cases = []
    for start, end in zip(starts, [*starts[1:], len(lines)]):
        body = lines[start:end]
        while body and not body[-1].strip():
            body.pop()
        runs = None
        for line in body:
            if _RUNS.match(line):
                value = _RUNS_VALUE.match(line)
                if value is None or runs is not None:
                    raise ValueError(f"{path.name}:{start + 1}: bad or second `# runs:` line")
                runs = value.group(1) or value.group(2)
        counts = Counter(
            (row, code.strip())
            for row, line in enumerate(body, start=1)
            for mark in [_MARK.search(line)] if mark
            for code in mark.group(1).split(",")
        )
        cases.append(Case(
            code=path.stem,
            slug=slugify(_CASE.match(body[0]).group(1)),
            source="\n".join(body) + "\n",
            expected=tuple(catalog.marks(body)),
            repeats=tuple(sorted((key, n) for key, n in counts.items() if n > 1)),
            runs=runs,
            path=path,
            low=tuple((row, code.strip())
                      for row, line in enumerate(body, start=1)
                      for mark in [_LOW.search(line)] if mark
                      for code in mark.group(1).split(",")),
            line=start + 1,
        ))
    return cases


CASE_FILES = sorted(CASES_DIR.glob("*.py"))
CASES = [case for path in CASE_FILES for case in read_cases(path)]
HAZARD_CODES = sorted(code for code, rule in registry.rules().items() if rule.checks)


def _param(case: Case):
    return pytest.param(case, id=case.id)


# --- the rule cases -------------------------------------------------------------------------


@pytest.mark.parametrize("case", [_param(case) for case in CASES])
def test_case_fires_exactly_where_marked(case):
    found = lint(case.source)
    assert sorted(set(found)) == sorted(case.expected), f"{case.path.name}:{case.line}"
    both = check_source(case.source, "example.py", set(HAZARD_CODES), confidence="low")
    low = [(d.location.row, d.code) for d in both if d.confidence == "low"]
    assert sorted(set(low)) == sorted(case.low), f"{case.path.name}:{case.line}: low"
    counts = Counter(found)
    assert [(key, counts[key]) for key, _ in case.repeats] == list(case.repeats)


@pytest.mark.parametrize("case", [_param(case) for case in CASES if case.runs])
def test_case_runs_as_marked(case, tmp_path, monkeypatch):
    """The case runs as a script in this process (torch is imported once for all of them), in
    a fresh namespace and an empty working directory."""
    pytest.importorskip("torch")
    monkeypatch.chdir(tmp_path)
    code = compile(case.source, f"<{case.id}>", "exec")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exec(code, {"__name__": "__main__"})
        except Exception as error:  # the hazard under test
            raised: Exception | None = error
        else:
            raised = None
    if case.runs == "ok":
        assert raised is None, repr(raised)
    else:
        assert raised is not None, f"ran without raising {case.runs}"
        assert type(raised).__name__ == case.runs, repr(raised)


def test_every_rule_with_checks_has_positive_and_negative_cases():
    assert [path.stem for path in CASE_FILES] == HAZARD_CODES
    for code in HAZARD_CODES:
        cases = [case for case in CASES if case.code == code]
        assert any(code in {c for _, c in case.expected} for case in cases), f"{code}: no positive"
        assert any(not case.expected for case in cases), f"{code}: no negative case"


def test_case_ids_are_unique():
    ids = Counter(case.id for case in CASES)
    assert [i for i, n in ids.items() if n > 1] == []


@pytest.mark.parametrize("path", CASE_FILES, ids=lambda path: path.name)
def test_case_file_is_python_and_no_test_module(path):
    ast.parse(path.read_text(encoding="utf-8"), str(path))
    # pytest collects test_*.py and *_test.py (the defaults; pyproject sets no others).
    assert not any(fnmatch.fnmatch(path.name, p) for p in ("test_*.py", "*_test.py"))
    assert path.stem in registry.rules(), f"{path.name} names no rule"


def test_case_reader():
    text = ('"""Doc."""\n\n# case: First one!\nimport torch\nx = 1  # error: AL401, AL404, AL401\n'
            "\n\n# case: second\n# runs: raises RuntimeError\nimport torch\n\n")
    path = Path("/nonexistent/AL401.py")
    first, second = _read_text(path, text)
    assert (first.id, first.line, first.runs) == ("AL401-first-one", 3, None)
    assert first.source == "# case: First one!\nimport torch\nx = 1  # error: AL401, AL404, AL401\n"
    assert first.expected == ((3, "AL401"), (3, "AL404"))
    assert first.repeats == (((3, "AL401"), 2),)
    assert (second.id, second.runs, second.expected) == ("AL401-second", "RuntimeError", ())
    with pytest.raises(ValueError, match="runs"):
        _read_text(path, "# case: a\n# runs: maybe\n")
    with pytest.raises(ValueError, match="before the first"):
        _read_text(path, "x = 1  # error: AL401\n# case: a\n")


def _read_text(path: Path, text: str) -> list[Case]:
    original = Path.read_text
    try:
        Path.read_text = lambda self, *args, **kwargs: text  # type: ignore[method-assign]
        return read_cases(path)
    finally:
        Path.read_text = original  # type: ignore[method-assign]


# --- the fixtures' stated findings ----------------------------------------------------------

# A fixture may open with the findings a precise checker gives, one comment line each:
#     # Expected findings of a precise checker (nothing else in this file):
#     # expected: AL301 at line 25
_STATED = "# Expected findings of a precise checker (nothing else in this file):"
_EXPECTED = re.compile(r"^# expected: (AL\d{3}) at line (\d+)$")


def stated_findings(text: str) -> list[tuple[int, str]] | None:
    """The (row, code) findings a fixture's header states, or None if it states none."""
    lines = text.splitlines()
    if not lines or lines[0] != _STATED:
        if any("expected" in line.lower() for line in lines[:3]):
            raise ValueError(f"a header that states findings must start with {_STATED!r}")
        return None
    found = []
    for line in lines[1:]:
        if not line.startswith("#"):
            break
        match = _EXPECTED.match(line)
        if match is None:
            raise ValueError(f"not `# expected: ALnnn at line N`: {line!r}")
        found.append((int(match.group(2)), match.group(1)))
    return sorted(found)


FIXTURE_FILES = sorted(FIXTURES.rglob("*.py"))
STATING = [path for path in FIXTURE_FILES
           if stated_findings(path.read_text(encoding="utf-8")) is not None]


@pytest.mark.parametrize("fixture", STATING, ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_fixture_gives_the_findings_its_header_states(fixture):
    text = fixture.read_text(encoding="utf-8")
    found = check_source(text, str(fixture), HAZARD_CODES)
    assert sorted((d.location.row, d.code) for d in found) == stated_findings(text)


def test_fixture_headers():
    assert len(STATING) >= 10
    assert stated_findings('"""Doc."""\n') is None
    assert stated_findings(f"{_STATED}\n# expected: AL201 at line 9\n# expected: AL101 at "
                           "line 4\n\"\"\"Doc.\"\"\"\n") == [(4, "AL101"), (9, "AL201")]
    with pytest.raises(ValueError):
        stated_findings(f"{_STATED}\n# expected: AL201 on line 9\n")
    with pytest.raises(ValueError):
        stated_findings("# Expected findings:\n# expected: AL201 at line 9\n")


# --- one module and one spec make a rule ----------------------------------------------------

DUMMY_MODULE = '''\
"""AL999 dummy-rule: exists only in a test."""

import re

from aliaslint.analysis import Call
from aliaslint.rule import Context, Rule

RULE = Rule(
    "AL999", "dummy-rule", "Every `torch.zeros` call is reported.",
    words=re.compile(r"zeros").search,
    assumption="`torch.zeros_like` is as suspect as `torch.zeros`",
)


@RULE.check(Call)
def zeros(event: Call, ctx: Context):
    if event.qualname == "torch.zeros":
        yield RULE.finding(event.node, event.stmt, f"{ctx.code(event.node)} makes zeros")


@RULE.check(Call)
def zeros_like(event: Call, ctx: Context):
    if event.qualname == "torch.zeros_like":
        yield RULE.finding(event.node, event.stmt, f"{ctx.code(event.node)} may make zeros",
                           confidence="low")
'''

DUMMY_DOC = '''\
# AL999 dummy-rule

Every `torch.zeros` call is reported.

## What it does

Reports each call of `torch.zeros`; with `--confidence low`, each `torch.zeros_like` too.

## Why is this bad?

It is not; the rule exists to test that a module and a spec are a whole rule.

## Example

```python bad
import torch
x = torch.zeros(3)  # error: AL999
y = torch.zeros_like(x)
```

## Use instead

```python good
import torch
x = torch.ones(3)
```

## Fix safety

There is no fix.

## Runtime confirmation

None.

## References

- This test.
'''


@pytest.fixture
def dummy_rule(tmp_path, monkeypatch):
    """AL999 as one module in a directory on ``aliaslint.checks.__path__`` and one spec in a
    rules directory beside the real specs."""
    import aliaslint.checks

    modules = tmp_path / "checks"
    modules.mkdir()
    (modules / "al999_dummy_rule.py").write_text(DUMMY_MODULE, encoding="utf-8")
    specs = tmp_path / "rules"
    specs.mkdir()
    for spec in catalog.rules_dir().glob("AL*.md"):
        (specs / spec.name).write_text(spec.read_text(encoding="utf-8"), encoding="utf-8")
    (specs / "AL999.md").write_text(DUMMY_DOC, encoding="utf-8")

    monkeypatch.setattr(aliaslint.checks, "__path__", [*aliaslint.checks.__path__, str(modules)])
    monkeypatch.setattr(catalog, "rules_dir", lambda: specs)
    registry.reload()
    catalog.load_docs.cache_clear()
    yield
    monkeypatch.undo()
    sys.modules.pop("aliaslint.checks.al999_dummy_rule", None)
    registry.reload()
    catalog.load_docs.cache_clear()
    assert "AL999" not in registry.rules() and "AL999" not in catalog.load_docs()


ZEROS = "import torch\nx = torch.zeros(3)\ny = torch.zeros_like(x)\n"


def test_one_module_and_one_spec_make_a_rule(dummy_rule, capsys):
    # The registry collects the module.
    rule = registry.get("AL999")
    assert rule is not None and rule.name == "dummy-rule" and len(rule.checks) == 2
    assert set(catalog.load_docs()) == set(registry.rules())

    # `aliaslint rules`, as text and as JSON, lists it.
    assert main(["rules"]) == 0
    listed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("AL999")]
    assert len(listed) == 1
    assert listed[0].split(None, 2)[1:] == ["dummy-rule", "Every `torch.zeros` call is reported."]
    assert main(["rules", "--output-format", "json"]) == 0
    (entry,) = [r for r in json.loads(capsys.readouterr().out) if r["code"] == "AL999"]
    assert entry["name"] == "dummy-rule" and entry["default"] == "on"
    assert entry["confidence"] == ["high", "low"]

    # `aliaslint rule AL999` prints its spec.
    assert main(["rule", "AL999"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# AL999 dummy-rule\n\nEvery `torch.zeros` call is reported.\n")
    assert "x = torch.zeros(3)  # error: AL999" in out and "## References" in out

    # The prefilter reads its words.
    only = frozenset({"AL999"})
    assert engine.may_find(ZEROS, only)
    assert not engine.may_find("import torch\nx = torch.ones(3)\n", only)
    assert not engine.may_find("x = zeros(3)\n", only)

    # Its spec's examples pass the spec test.
    examples = catalog.load_docs()["AL999"].examples
    assert [example.kind for example in examples] == ["bad", "good"]
    for example in examples:
        spec_example_check("AL999", example)

    # A low-confidence finding is reported only when asked for.
    high = check_source(ZEROS, "m.py", {"AL999"})
    assert [(d.location.row, d.code, d.confidence) for d in high] == [(2, "AL999", "high")]
    both = check_source(ZEROS, "m.py", {"AL999"}, confidence="low")
    assert [(d.location.row, d.confidence) for d in both] == [(2, "high"), (3, "low")]
    assert both[1].message == "`torch.zeros_like(x)` may make zeros"


LOW_MARKS = {
    # How each output format tells the low-confidence finding (line 3) from the high one.
    "full": lambda out: [line.split(": ", 1)[1] for line in out.splitlines()
                         if line.startswith("m.py:")],
    "concise": lambda out: [line for line in out.splitlines() if line.startswith("m.py:")],
    "json": lambda out: [d["confidence"] for d in json.loads(out)],
    "sarif": lambda out: [r["level"] for r in json.loads(out)["runs"][0]["results"]],
    "github": lambda out: [line.partition(" ")[0] for line in out.splitlines()],
    "gitlab": lambda out: [issue["severity"] for issue in json.loads(out)],
    # The static findings' list: each finding's code, marked when low, then where.
    "html": lambda out: re.findall(r'<span class="code-id">AL999</span> ([^<]*)<span '
                                   r'class="where">([^<]*)</span>', out),
}
LOW_EXPECTED = {
    "full": ["AL999 [dummy-rule] `torch.zeros(3)` makes zeros",
             "AL999 [dummy-rule] (low confidence) `torch.zeros_like(x)` may make zeros"],
    "concise": ["m.py:2:5: AL999 `torch.zeros(3)` makes zeros",
                "m.py:3:5: AL999 (low confidence) `torch.zeros_like(x)` may make zeros"],
    "json": ["high", "low"],
    "sarif": ["error", "warning"],
    "github": ["::error", "::warning"],
    "gitlab": ["major", "minor"],
    "html": [("", "m.py:2"), ("(low confidence) ", "m.py:3")],
}


@pytest.mark.parametrize("fmt", report.FORMATS)
def test_low_confidence_finding_in_every_output_format(dummy_rule, fmt, project, capsys):
    (project / "m.py").write_text(ZEROS, encoding="utf-8")
    command = ["check", "m.py", "--isolated", "--no-cache", "--jobs", "1", "--select", "AL999",
               "--output-format", fmt]
    main(command)
    high_only = capsys.readouterr().out
    main([*command, "--confidence", "low"])
    both = capsys.readouterr().out
    assert LOW_MARKS[fmt](both) == LOW_EXPECTED[fmt]
    assert LOW_MARKS[fmt](high_only) == LOW_EXPECTED[fmt][:1]
