"""The rule catalog in rules/ is the registry's documentation, and its examples are tests."""

import re
from pathlib import Path

import libcst
import pytest

from aliaslint.catalog import load_rules, markdown_table, parse_rule
from aliaslint.checks import CHECKS
from aliaslint.config import ALWAYS_ON
from conftest import lint

ROOT = Path(__file__).resolve().parent.parent
DESIGN_CODES = {
    "AL101", "AL102", "AL103", "AL104", "AL105", "AL201", "AL202", "AL203", "AL204", "AL205",
    "AL206", "AL207", "AL208", "AL301", "AL401", "AL402", "AL403", "AL404",
}
META_CODES = {"AL901", "AL902", "AL903"}
SECTIONS = ["## What it does", "## Why is this bad?", "## Example", "## Use instead",
            "## Fix safety", "## Runtime confirmation", "## References"]
RULES = load_rules()
EXAMPLES = [
    pytest.param(rule, index, example, id=f"{code}-{example.kind}-{index}")
    for code, rule in RULES.items()
    for index, example in enumerate(rule.examples)
]


def test_catalog_holds_every_code_once():
    assert set(RULES) == DESIGN_CODES | META_CODES


def test_registry_and_catalog_match_one_to_one():
    checked = {check.code for check in CHECKS}
    implemented = {code for code, rule in RULES.items() if rule.implemented}
    assert implemented == checked | META_CODES
    assert ALWAYS_ON <= META_CODES


@pytest.mark.parametrize("code", sorted(DESIGN_CODES))
def test_rule_doc_has_every_section_and_examples(code):
    rule = RULES[code]
    positions = [rule.text.find(section) for section in SECTIONS]
    assert -1 not in positions, [s for s, p in zip(SECTIONS, positions) if p == -1]
    assert positions == sorted(positions)
    kinds = [example.kind for example in rule.examples]
    assert "bad" in kinds and "good" in kinds
    assert rule.summary.endswith(".")


@pytest.mark.parametrize(("rule", "index", "example"), EXAMPLES)
def test_example_is_valid_python(rule, index, example):
    libcst.parse_module(example.source)
    if example.kind == "bad":
        assert example.expected, "a bad example marks its findings with `# error: CODE`"
        assert {code for _, code in example.expected} <= set(RULES)


@pytest.mark.parametrize(("rule", "index", "example"), EXAMPLES)
def test_implemented_examples_fire_exactly_where_marked(rule, index, example):
    if not rule.implemented:
        pytest.skip(f"{rule.code} is planned")
    implemented = {check.code for check in CHECKS}
    found = lint(example.source)
    if example.kind == "bad":
        # Marks name each code once per line, however often it fires there.
        expected = sorted((row, code) for row, code in example.expected if code in implemented)
        assert sorted(set(found)) == expected
    else:
        assert found == []


def test_readme_rule_table_is_generated_from_the_catalog():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- rules:start -->\n(.*?)<!-- rules:end -->", readme, re.S)
    assert match, "README lacks the generated rule table"
    assert match.group(1) == markdown_table(), (
        "README's rule table is stale: paste `aliaslint rules --output-format markdown`"
    )


def test_parse_rule_reports_a_bad_header():
    with pytest.raises(ValueError, match="first line"):
        parse_rule("AL401 id-sharing-check\n")
    with pytest.raises(ValueError, match="missing"):
        parse_rule("# AL401 id-sharing-check\n\nSummary.\n\n- Fix: none\n")


def test_marks_are_read_per_line():
    rule = parse_rule(
        "# AL999 demo\n\nDemo.\n\n- Fix: none\n- Status: planned\n- Default: on\n\n"
        "```python bad\nx = 1\ny = 2  # error: AL401, AL404\n```\n"
    )
    assert rule.examples[0].expected == ((2, "AL401"), (2, "AL404"))
