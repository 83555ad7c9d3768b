"""The registry and the rule specs in rules/ match one to one, and the specs' examples are tests."""

import io
import re
import subprocess
import sys
import tokenize
from pathlib import Path

import libcst
import pytest

from aliaslint import registry
from aliaslint.catalog import load_docs, markdown_table, parse_doc
from aliaslint.diagnostics import META_CODES
from aliaslint.engine import check_source
from aliaslint.fixes import fix_text
from aliaslint.runtime.predicates import PREDICATES
from conftest import lint

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = ["## What it does", "## Why is this bad?", "## Example", "## Use instead",
            "## Fix safety", "## Runtime confirmation", "## References"]
RULES = registry.rules()
DOCS = load_docs()
HAZARD_CODES = sorted(code for code, rule in RULES.items() if rule.checks)
EXAMPLES = [
    pytest.param(code, example, id=f"{code}-{example.kind}-{index}")
    for code, doc in DOCS.items()
    for index, example in enumerate(doc.examples)
]


def test_every_rule_has_a_spec_and_every_spec_a_rule():
    assert set(DOCS) == set(RULES)


@pytest.mark.parametrize("code", sorted(RULES))
def test_spec_names_and_summarises_its_rule_as_the_module_does(code):
    rule, doc = RULES[code], DOCS[code]
    assert (doc.name, doc.summary) == (rule.name, rule.summary)
    assert rule.summary.endswith(".")


def test_meta_codes_are_the_rules_without_checks():
    assert {code for code, rule in RULES.items() if not rule.checks} == META_CODES
    assert registry.always_on() <= META_CODES


@pytest.mark.parametrize("code", HAZARD_CODES)
def test_hazard_rule_is_confirmed_by_a_known_predicate(code):
    predicate = RULES[code].confirm
    assert predicate is not None and PREDICATES[predicate.kind] is predicate


@pytest.mark.parametrize("code", HAZARD_CODES)
def test_rule_doc_has_every_section_and_examples(code):
    doc = DOCS[code]
    positions = [doc.text.find(section) for section in SECTIONS]
    assert -1 not in positions, [s for s, p in zip(SECTIONS, positions) if p == -1]
    assert positions == sorted(positions)
    kinds = [example.kind for example in doc.examples]
    assert "bad" in kinds and "good" in kinds


@pytest.mark.parametrize(("code", "example"), EXAMPLES)
def test_example_fires_exactly_where_marked(code, example):
    libcst.parse_module(example.source)
    found = lint(example.source)
    if example.kind == "bad":
        assert example.expected, "a bad example marks its findings with `# error: CODE`"
        # Marks name each code once per line, however often it fires there.
        assert sorted(set(found)) == sorted(example.expected)
    else:
        assert found == []


def test_readme_rule_table_is_generated_from_the_registry():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- rules:start -->\n(.*?)<!-- rules:end -->", readme, re.S)
    assert match, "README lacks the generated rule table"
    assert match.group(1) == markdown_table(), (
        "README's rule table is stale: paste `aliaslint rules --output-format markdown`"
    )


def test_parse_doc_reports_a_bad_header():
    with pytest.raises(ValueError, match="first line"):
        parse_doc("AL401 id-sharing-check\n")
    with pytest.raises(ValueError, match="summary"):
        parse_doc("# AL401 id-sharing-check\n\n## What it does\n")


def test_marks_are_read_per_line():
    doc = parse_doc("# AL999 demo\n\nDemo.\n\n```python bad\nx = 1\ny = 2  # error: AL401, AL404\n```\n")
    assert doc.examples[0].expected == ((2, "AL401"), (2, "AL404"))


FIXED = [code for code in sorted(RULES) if RULES[code].fix not in (None, "none")]


def _code_only(source: str) -> list[str]:
    """The lines of ``source`` without comments (a fixed example says what now holds where
    the bad one said what fails) and without the blank lines they leave."""
    comments = {(token.start[0], token.start[1]) for token in tokenize.generate_tokens(
        io.StringIO(source).readline) if token.type == tokenize.COMMENT}
    lines = []
    for row, line in enumerate(source.splitlines(), start=1):
        column = next((c for r, c in comments if r == row), None)
        kept = (line if column is None else line[:column]).rstrip()
        if kept or column is None:
            lines.append(kept)
    return lines


@pytest.mark.parametrize("code", FIXED)
def test_fixed_example_is_what_the_fixes_make_of_the_bad_one(code):
    examples = DOCS[code].examples
    bad = next(e for e in examples if e.kind == "bad")
    outcome = fix_text(bad.source, "example.py", lambda text: check_source(text, "x.py"),
                       lambda d: d.fix is not None and d.fix.applicability != "display-only")
    fixed = [e for e in examples if e.kind == "fixed"]
    if outcome.text == bad.source:
        assert not fixed, "the fixes leave the bad example as it is: drop the fixed block"
        return
    assert len(fixed) == 1, "a rule whose fixes change its bad example shows the result"
    assert _code_only(fixed[0].source) == _code_only(outcome.text)
    again = fix_text(outcome.text, "example.py", lambda text: check_source(text, "x.py"),
                     lambda d: d.fix is not None and d.fix.applicability != "display-only")
    assert again.text == outcome.text and not again.fixed


@pytest.mark.slow
@pytest.mark.parametrize("code", [c for c in FIXED if any(
    e.kind == "fixed" for e in DOCS[c].examples)])
def test_fixed_example_runs_without_the_hazard(code, tmp_path):
    """The bad example fails under torch (its assert, or the error PyTorch raises); the
    fixed one runs to the end."""
    pytest.importorskip("torch")
    (bad,) = [e for e in DOCS[code].examples if e.kind == "bad"]
    (fixed,) = [e for e in DOCS[code].examples if e.kind == "fixed"]
    results = []
    for example in (bad, fixed):
        script = tmp_path / "example.py"
        script.write_text(example.source)
        results.append(subprocess.run([sys.executable, str(script)], capture_output=True,
                                      text=True, cwd=tmp_path, timeout=120))
    assert results[0].returncode != 0, "the bad example should fail under torch"
    assert results[1].returncode == 0, results[1].stderr


def test_every_hazard_the_tracer_sees_is_one_rule_s():
    """The tracer knows no codes: each hazard it reports is declared by exactly one rule."""
    from aliaslint.runtime.hazards import Hazard, codes

    assert set(codes()) == set(Hazard)
    for hazard, code in codes().items():
        assert RULES[code].confirm is not None, (hazard, code)
