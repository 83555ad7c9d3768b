"""The rule catalog: one Markdown spec per code in ``rules/``, parsed once.

The specs are the single source of every rule's name, summary, status and
documentation; ``aliaslint rule CODE`` prints them and the tests lint their
examples.  In a wheel they live in ``aliaslint/rules``; in a source checkout
they are the top-level ``rules/`` directory beside the package.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

DOCS_BASE = "https://github.com/aliaslint/aliaslint/blob/main/rules/"

_HEADER = re.compile(r"^# (AL\d{3}) ([a-z0-9-]+)\s*$")
_FIELD = re.compile(r"^- (Fix|Status|Default): (\S+)\s*$")
_FENCE = re.compile(r"^```python (bad|good|fixed)\s*$")
_MARK = re.compile(r"#\s*error:\s*(AL\d{3}(?:\s*,\s*AL\d{3})*)\s*$")


@dataclass(frozen=True)
class Example:
    kind: str  # "bad", "good" or "fixed"
    source: str
    # (row, code) pairs a "bad" example must produce, from its `# error:` marks.
    expected: tuple[tuple[int, str], ...]


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    summary: str
    fix: str
    status: str
    default_on: bool
    text: str
    examples: tuple[Example, ...]

    @property
    def implemented(self) -> bool:
        return self.status == "implemented"


def rules_dir() -> Path:
    packaged = Path(__file__).resolve().parent / "rules"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "rules"


def rule_url(code: str) -> str:
    return f"{DOCS_BASE}{code}.md"


def parse_rule(text: str, origin: str = "<rule>") -> Rule:
    lines = text.splitlines()
    header = _HEADER.match(lines[0]) if lines else None
    if header is None:
        raise ValueError(f"{origin}: first line must be '# ALnnn rule-name'")
    fields: dict[str, str] = {}
    summary = ""
    for line in lines[1:]:
        if line.startswith("## "):
            break
        field_match = _FIELD.match(line)
        if field_match:
            fields[field_match.group(1)] = field_match.group(2)
        elif line.strip() and not summary:
            summary = line.strip()
    missing = {"Fix", "Status", "Default"} - fields.keys()
    if missing or not summary:
        raise ValueError(f"{origin}: missing {sorted(missing) or 'summary'} in the header")
    return Rule(
        code=header.group(1),
        name=header.group(2),
        summary=summary,
        fix=fields["Fix"],
        status=fields["Status"],
        default_on=fields["Default"] == "on",
        text=text,
        examples=tuple(_examples(lines)),
    )


def _examples(lines: list[str]):
    kind = None
    body: list[str] = []
    for line in lines:
        if kind is None:
            fence = _FENCE.match(line)
            if fence:
                kind, body = fence.group(1), []
        elif line.startswith("```"):
            source = "\n".join(body) + "\n"
            expected = []
            for row, src_line in enumerate(body, start=1):
                mark = _MARK.search(src_line)
                if mark:
                    codes = dict.fromkeys(c.strip() for c in mark.group(1).split(","))
                    expected.extend((row, code) for code in codes)
            yield Example(kind, source, tuple(expected))
            kind = None
        else:
            body.append(line)


@cache
def load_rules() -> dict[str, Rule]:
    rules = {}
    for path in sorted(rules_dir().glob("AL*.md")):
        rule = parse_rule(path.read_text(encoding="utf-8"), origin=str(path))
        if rule.code != path.stem:
            raise ValueError(f"{path}: header names {rule.code}")
        rules[rule.code] = rule
    return rules


def markdown_table() -> str:
    """The rule list as the README shows it (`aliaslint rules --output-format markdown`)."""
    rows = ["| code | name | summary | status |", "|---|---|---|---|"]
    for rule in load_rules().values():
        status = rule.status if rule.default_on or not rule.implemented else "off by default"
        rows.append(f"| [{rule.code}](rules/{rule.code}.md) | {rule.name} | {rule.summary} | {status} |")
    return "\n".join(rows) + "\n"
