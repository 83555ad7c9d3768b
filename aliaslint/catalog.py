"""The rule documentation: one Markdown spec per code in ``rules/``.

A spec documents its rule (``aliaslint rule CODE`` prints it, SARIF embeds it) and
holds executable examples: ``python bad`` blocks mark each expected finding with
``# error: ALnnn`` and ``python good`` blocks must stay quiet.  What a rule *is*
(code, name, default, checks) lives in its module; the specs only describe it.  In a
wheel they live in ``aliaslint/rules``; in a source checkout they are the top-level
``rules/`` directory beside the package.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

_HEADER = re.compile(r"^# (AL\d{3}) ([a-z0-9-]+)\s*$")
_FENCE = re.compile(r"^```python (bad|good|fixed)\s*$")
_MARK = re.compile(r"#\s*error:\s*(AL\d{3}(?:\s*,\s*AL\d{3})*)\s*$")


@dataclass(frozen=True)
class Example:
    kind: str  # "bad", "good" or "fixed"
    source: str
    # (row, code) pairs a "bad" example must produce, from its `# error:` marks.
    expected: tuple[tuple[int, str], ...]


@dataclass(frozen=True)
class RuleDoc:
    code: str
    name: str
    summary: str  # the first paragraph after the header
    text: str
    examples: tuple[Example, ...]


def rules_dir() -> Path:
    packaged = Path(__file__).resolve().parent / "rules"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "rules"


def parse_doc(text: str, origin: str = "<rule>") -> RuleDoc:
    lines = text.splitlines()
    header = _HEADER.match(lines[0]) if lines else None
    if header is None:
        raise ValueError(f"{origin}: first line must be '# ALnnn rule-name'")
    summary = next((line.strip() for line in lines[1:] if line.strip()), "")
    if not summary or summary.startswith("#"):
        raise ValueError(f"{origin}: missing the summary line under the header")
    return RuleDoc(header.group(1), header.group(2), summary, text, tuple(examples(lines)))


def examples(lines: list[str]):
    """The fenced ``python bad|good|fixed`` blocks, with the findings bad ones mark."""
    kind = None
    body: list[str] = []
    for line in lines:
        if kind is None:
            fence = _FENCE.match(line)
            if fence:
                kind, body = fence.group(1), []
        elif line.startswith("```"):
            yield Example(kind, "\n".join(body) + "\n", tuple(marks(body)))
            kind = None
        else:
            body.append(line)


def marks(lines: list[str]):
    """(row, code) for each `# error: ALnnn[, ALmmm]` mark, rows counted from 1."""
    for row, line in enumerate(lines, start=1):
        mark = _MARK.search(line)
        if mark:
            for code in dict.fromkeys(c.strip() for c in mark.group(1).split(",")):
                yield row, code


@cache
def load_docs() -> dict[str, RuleDoc]:
    docs = {}
    for path in sorted(rules_dir().glob("AL*.md")):
        doc = parse_doc(path.read_text(encoding="utf-8"), origin=str(path))
        if doc.code != path.stem:
            raise ValueError(f"{path}: header names {doc.code}")
        docs[doc.code] = doc
    return docs


def markdown_table() -> str:
    """The rule list as the README shows it (`aliaslint rules --output-format markdown`)."""
    from aliaslint import registry

    rows = ["| code | name | summary | default |", "|---|---|---|---|"]
    for rule in registry.rules().values():
        default = "on" if rule.default else "off"
        rows.append(f"| [{rule.code}](rules/{rule.code}.md) | {rule.name} | {rule.summary} "
                    f"| {default} |")
    return "\n".join(rows) + "\n"

