"""Every finding's message starts with a headline: one line of at most 120 characters that
says what goes wrong in the user's words, naming the code it is about, with the details after
it (`` · ``). The headline is what `concise` prints."""

import os
import re
import textwrap
from pathlib import Path

import pytest

from aliaslint import registry
from aliaslint.catalog import load_docs
from aliaslint.engine import check_source
from aliaslint.headline import HEADLINE_LENGTH, Code, fit, shortened
from aliaslint.report import concise_message
from test_rules import CASE_FILES, read_cases

RULES = registry.rules()
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
DOCS = load_docs()
# Words of the analysis, which mean nothing to someone reading about their own code.
JARGON = re.compile(r"\b(storage tokens?|tokens?|events?|witness(es)?|predicates?|lattice|"
                    r"abstract value|StaleRead|SavedWrite|InplaceWrite)\b", re.IGNORECASE)
# The meta rules have no bad examples; what makes each of them fire.
META_CASES = {
    "AL901": "import torch\n\nx = torch.ones(2)  # noqa: AL401\n",
    "AL902": "import torch\n\ny = (\n",
}


def headline(message: str) -> str:
    return message.split("\n", 1)[0].split(" · ", 1)[0]


def located(source: str, d) -> str:
    """The code a finding points at, on one line."""
    lines = source.splitlines()
    start, end = d.location, d.end_location
    if start.row == end.row:
        text = lines[start.row - 1][start.column - 1:end.column - 1]
    else:
        text = " ".join([lines[start.row - 1][start.column - 1:],
                         *lines[start.row:end.row - 1], lines[end.row - 1][:end.column - 1]])
    return " ".join(text.split())


def problems(source: str, d) -> list[str]:
    """What is wrong with one finding's headline (nothing, for a good one)."""
    head = headline(d.message)
    found = []
    if len(head) > HEADLINE_LENGTH:
        found.append(f"{len(head)} characters")
    if head.rstrip().endswith((".", ":", ";", ",")):
        found.append("ends with punctuation")
    prose = " ".join(head.split("`")[0::2])
    if JARGON.search(prose):
        found.append(f"jargon {JARGON.search(prose).group()!r}")
    quotes = head.split("`")[1::2]
    cut = [q for q in quotes if q.endswith("...")]
    if cut:
        found.append(f"quoted code cut short: {cut}")
    if d.code not in META_CASES:
        # The code at the finding's location is quoted, whole or with brackets elided.
        here = located(source, d)
        if not any(form in quotes for form in shortened(here)):
            found.append(f"does not quote the located code `{here}`")
    return found


def bad_examples():
    """Each rule's bad examples (rules/ALnnn.md), then its cases (tests/rules/ALnnn.py),
    which reach every form of its message, and the fixtures, programs as users write them."""
    for code, doc in sorted(DOCS.items()):
        for index, example in enumerate(doc.examples):
            if example.kind == "bad":
                yield f"{code}-{index}", textwrap.dedent(example.source)
    for path in CASE_FILES:
        for case in read_cases(path):
            if case.expected or case.low:
                yield case.id, case.source
    for path in sorted(FIXTURES.rglob("*.py")):
        yield str(path.relative_to(FIXTURES)), path.read_text(encoding="utf-8")
    for code, source in META_CASES.items():
        yield code, source


def test_every_rule_headline_fits_and_says_what_is_wrong():
    hazard_codes = {code for code, rule in RULES.items() if rule.checks}
    offenders, seen = [], set()
    for name, source in bad_examples():
        for d in check_source(source, "example.py", hazard_codes | {"AL901"},
                              report_unused_suppressions=True, confidence="low"):
            seen.add(d.code)
            found = problems(source, d)
            # `concise` shows the headline as written (ASCII punctuation only).
            if not found and concise_message(d.message) != headline(d.message):
                found.append(f"`concise` shows {concise_message(d.message)!r}")
            offenders += [f"{name} {d.code} line {d.location.row}: {problem}\n    "
                          f"{headline(d.message)}" for problem in found]
    assert not offenders, "headlines to rewrite:\n" + "\n".join(offenders)
    assert seen >= hazard_codes | set(META_CASES), "some rule fired on none of its examples"


@pytest.mark.parametrize(("code", "forms"), [
    # The call a finding is about stays; what its brackets enclose goes first.
    ("torch.randn(4, requires_grad=True).tanh()",
     ["torch.randn(4, requires_grad=True).tanh()", "torch.randn(...).tanh()"]),
    ("torch.arange(tokens.shape[1]).expand(tokens.shape[0], -1)",
     ["torch.arange(tokens.shape[1]).expand(tokens.shape[0], -1)",
      "torch.arange(tokens.shape[1]).expand(...)", "torch.arange(...).expand(...)"]),
    ('logits[done][:, 1:] = float("-inf")',
     ['logits[done][:, 1:] = float("-inf")', "logits[done][:, 1:] = float(...)",
      "logits[done][...] = float(...)", "logits[...][...] = float(...)"]),
])
def test_quoted_code_loses_what_brackets_enclose_before_anything_is_cut(code, forms):
    assert shortened(code)[:len(forms)] == forms


def test_a_headline_shortens_its_longest_quote_first_and_cuts_only_as_a_last_resort():
    pieces = ["", Code("positions.mul_(~pad)"), " writes an `expand`ed tensor (",
              Code("torch.arange(tokens.shape[1]).expand(tokens.shape[0], -1)"), ")"]
    assert fit(pieces, limit=86) == (
        "`positions.mul_(~pad)` writes an `expand`ed tensor (`torch.arange(...).expand(...)`)")
    assert fit(pieces, limit=200) == fit(pieces) == "".join(
        f"`{p.text}`" if isinstance(p, Code) else p for p in pieces)
    # Nothing left to elide: the quote is cut after a whole token, never mid-name.
    assert fit(["", Code("model.encoder.layers.attention_weights")], limit=30) == \
        "`model.encoder.layers...`"
    # Text that is not Python is cut by characters.
    assert fit(["", Code("a b c d e f g h i j k l m n o")], limit=20).endswith("...`")
    # The first quote, the finding's own code, keeps its arguments (they may be the point:
    # `inplace=True`) while a later variant fits that way; eliding wins over cutting.
    long = ["", Code("nn.ReLU(inplace=True)"), " in ", Code("self.act(x, mask)"), " overwrites `x`"]
    short = ["", Code("nn.ReLU(inplace=True)"), " overwrites `x`"]
    assert fit(long, short, limit=70) == (
        "`nn.ReLU(inplace=True)` in `self.act(x, mask)` overwrites `x`")
    assert fit(long, short, limit=57) == "`nn.ReLU(inplace=True)` in `self.act(...)` overwrites `x`"
    assert fit(long, short, limit=40) == "`nn.ReLU(inplace=True)` overwrites `x`"
    assert fit(long, short, limit=30) == "`nn.ReLU(...)` overwrites `x`"


HEADLINES_DOC = Path(__file__).resolve().parent.parent / "docs" / "headlines.md"


def render_headlines_doc() -> str:
    """docs/headlines.md: each rule's headline on its bad examples, as `concise` prints it."""
    hazard_codes = {code for code, rule in RULES.items() if rule.checks}
    out = ["# Headlines\n\n",
           "<!-- Generated by tests/test_headlines.py from the bad examples of rules/ALnnn.md; "
           "ALIASLINT_UPDATE_SNAPSHOTS=1 rewrites it. -->\n\n",
           "Every finding's message starts with a headline: one line of at most 120 characters "
           "that quotes the code at the finding's location and says what goes wrong, then ` · ` "
           "and the details. It is what `--output-format concise` prints, and the first thing "
           "`full`, JSON and the editor show. Quoted code is shortened at token boundaries: "
           "what brackets enclose is elided first (`torch.softmax(...)`), the code at the "
           "finding's location last, and nothing is cut while eliding suffices. Each rule "
           "fills one template (or a shorter variant when the longer does not fit); here they "
           "are on the rules' own examples:\n\n",
           "| rule | headline |\n|---|---|\n"]
    for code, doc in sorted(DOCS.items()):
        for example in doc.examples:
            if example.kind != "bad":
                continue
            for d in check_source(textwrap.dedent(example.source), "example.py", hazard_codes):
                if d.code == code:
                    text = concise_message(d.message).replace("|", "\\|")
                    out.append(f"| [{code}](../rules/{code}.md) | {text} |\n")
    return "".join(out)


def test_docs_list_each_rule_headline():
    text = render_headlines_doc()
    if os.environ.get("ALIASLINT_UPDATE_SNAPSHOTS"):
        HEADLINES_DOC.write_text(text, encoding="utf-8")
    assert HEADLINES_DOC.read_text(encoding="utf-8") == text, (
        "docs/headlines.md is stale: run this test with ALIASLINT_UPDATE_SNAPSHOTS=1")
