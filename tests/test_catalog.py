"""The registry and the rule specs in rules/ match one to one, and the specs' examples are tests."""

import re
from pathlib import Path

import libcst
import pytest

from aliaslint import registry
from aliaslint.catalog import load_docs, markdown_table, parse_doc
from aliaslint.diagnostics import META_CODES
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
    assert RULES[code].confirm in PREDICATES


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
