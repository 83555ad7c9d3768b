"""Suppression comments: ``# noqa``, ``# noqa: AL401`` and ``# aliaslint: ignore[AL401]``.

A comment on the reported line, or on the first line of the statement that
contains it, silences the finding.  ``# aliaslint: ignore-file`` anywhere
silences the whole file.  Comments are found with the tokenizer, so the
words inside a string never count.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field

from aliaslint.lines import normalise_line_breaks
from aliaslint.lines import split as split_lines

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.I)
_IGNORE = re.compile(r"#\s*aliaslint:\s*ignore(?:\[(?P<codes>[^\]]*)\])?(?!-)", re.I)
_IGNORE_FILE = re.compile(r"#\s*aliaslint:\s*ignore-file\b", re.I)
_CODE = re.compile(r"AL\d{3}")


@dataclass
class Directive:
    row: int
    column: int  # 1-based, of the comment
    end_column: int
    text: str
    # None: every code ("# noqa", "# aliaslint: ignore").
    codes: tuple[str, ...] | None
    # A plain "# noqa" may belong to another linter: never reported as unused.
    explicit: bool
    used: set[str] = field(default_factory=set)


@dataclass
class Suppressions:
    by_row: dict[int, list[Directive]]
    whole_file: bool = False

    def suppresses(self, code: str, rows: tuple[int, ...]) -> bool:
        if self.whole_file:
            return True
        for row in dict.fromkeys(rows):
            for directive in self.by_row.get(row, ()):
                if directive.codes is None or code in directive.codes:
                    directive.used.add(code)
                    return True
        return False

    def unused(self):
        """(directive, code or None, reason) for each suppression that silenced nothing."""
        for directives in self.by_row.values():
            for directive in directives:
                if not directive.explicit:
                    continue
                if directive.codes is None:
                    if not directive.used:
                        yield directive, None
                    continue
                for code in directive.codes:
                    if code not in directive.used:
                        yield directive, code


def parse_suppressions(source: str) -> Suppressions:
    lowered = source.lower()
    if "noqa" not in lowered and "aliaslint:" not in lowered:
        return Suppressions({})
    by_row: dict[int, list[Directive]] = {}
    whole_file = False
    try:
        tokens = [
            token
            # Rows as CPython counts them: tokenize itself only breaks at "\n".
            for token in tokenize.generate_tokens(
                io.StringIO(normalise_line_breaks(source)).readline)
            if token.type == tokenize.COMMENT
        ]
    except (tokenize.TokenError, SyntaxError):
        return Suppressions({})
    for token in tokens:
        text = token.string
        row, column = token.start
        if _IGNORE_FILE.search(text):
            whole_file = True
            continue
        for pattern, explicit_if_bare in ((_IGNORE, True), (_NOQA, False)):
            match = pattern.search(text)
            if match is None:
                continue
            listed = match.group("codes")
            if listed is None:
                codes, explicit = None, explicit_if_bare
            else:
                all_codes = re.findall(r"[A-Z]+[0-9]+", listed.upper())
                codes = tuple(code for code in all_codes if _CODE.fullmatch(code))
                if not codes:
                    # "# noqa: E501" is another linter's business.
                    continue
                explicit = True
            by_row.setdefault(row, []).append(
                Directive(row, column + 1, column + 1 + len(text), text, codes, explicit)
            )
            break
    return Suppressions(by_row, whole_file)


@dataclass(frozen=True)
class LineEdit:
    """Replace columns ``start``..``end`` (0-based code points) of one row with ``text``."""

    row: int
    start: int
    end: int
    text: str


_STRING_PARTS = frozenset(
    getattr(tokenize, name) for name in ("STRING", "FSTRING_MIDDLE", "TSTRING_MIDDLE")
    if hasattr(tokenize, name)
)


def noqa_edit(source: str, row: int, code: str) -> LineEdit | None:
    """The edit that silences ``code`` on ``row``: ``# noqa: CODE`` at the end of the line,
    or the code added to a ``# noqa: ...`` list already there.  None when no comment can go
    at the end of that line (it ends inside a string, or in a backslash continuation)."""
    lines = split_lines(source)
    if not 1 <= row <= len(lines):
        return None
    line = lines[row - 1]
    comment = None
    try:
        for token in tokenize.generate_tokens(
                io.StringIO(normalise_line_breaks(source)).readline):
            if token.type == tokenize.COMMENT and token.start[0] == row:
                comment = token
            elif token.type in _STRING_PARTS and token.start[0] <= row < token.end[0]:
                return None
            elif token.start[0] > row:
                break
    except (tokenize.TokenError, SyntaxError):
        # The reported rows parsed, so this is rare (IPython syntax in a notebook cell):
        # fall back to the raw line.
        if "#" in line or "'" in line or '"' in line:
            return None
    if comment is not None:
        match = _NOQA.search(comment.string)
        if match is not None and match.group("codes"):
            at = comment.start[1] + match.end("codes")
            return LineEdit(row, at, at, f", {code}")
    content = len(line.rstrip())
    if comment is None and line.rstrip().endswith("\\"):
        return None
    return LineEdit(row, content, len(line), f"  # noqa: {code}")
