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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from aliaslint.diagnostics import UNUSED_SUPPRESSION, Diagnostic, Position
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
    # Rows whose suppression is the comment of a later row (see ``_carried_rows``).
    carried: dict[int, int] = field(default_factory=dict)

    def suppresses(self, code: str, rows: tuple[int, ...]) -> bool:
        if self.whole_file:
            return True
        rows = (*rows, *(self.carried[row] for row in rows if row in self.carried))
        for row in dict.fromkeys(rows):
            for directive in self.by_row.get(row, ()):
                if directive.codes is None or code in directive.codes:
                    directive.used.add(code)
                    return True
        return False

    def used(self):
        """(directive, code or None) for each suppression that silenced something, as
        ``unused`` would name it had it silenced nothing."""
        return self._by_use(True)

    def unused(self):
        """(directive, code or None) for each suppression that silenced nothing."""
        return self._by_use(False)

    def _by_use(self, used: bool):
        # A plain "# noqa" may be another tool's: neither used nor unused here.
        for directives in self.by_row.values():
            for directive in directives:
                if not directive.explicit:
                    continue
                if directive.codes is None:
                    if bool(directive.used) == used:
                        yield directive, None
                    continue
                for code in directive.codes:
                    if (code in directive.used) == used:
                        yield directive, code


def parse_suppressions(source: str) -> Suppressions:
    lowered = source.lower()
    if "noqa" not in lowered and "aliaslint:" not in lowered:
        return Suppressions({})
    by_row: dict[int, list[Directive]] = {}
    whole_file = False
    tokens = _tokens(source)
    if tokens is None:
        return Suppressions({})
    for token in tokens:
        if token.type != tokenize.COMMENT:
            continue
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
    return Suppressions(by_row, whole_file, _carried_rows(tokens))


def _tokens(source: str) -> list[tokenize.TokenInfo] | None:
    """The source's tokens, rows as CPython counts them (``tokenize`` itself only breaks
    at "\\n"); None when it does not tokenize."""
    try:
        return list(tokenize.generate_tokens(io.StringIO(normalise_line_breaks(source)).readline))
    except (tokenize.TokenError, SyntaxError):
        return None


_LINE_ENDS = frozenset({tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT})


def _carried_rows(tokens: list[tokenize.TokenInfo]) -> dict[int, int]:
    """Rows at whose end no comment can go, and the row whose comment stands for them
    (as ruff places and reads ``noqa``): a row inside a multi-line string, or one a
    backslash continues, is carried to the next row that ends outside a string."""
    carried: dict[int, int] = {}
    pending = 1
    for token in tokens:
        if token.type in _LINE_ENDS:
            row = token.start[0]
            carried.update((earlier, row) for earlier in range(pending, row))
            pending = max(pending, row + 1)
    return carried


@dataclass(frozen=True)
class LineEdit:
    """Replace columns ``start``..``end`` (0-based code points) of one row with ``text``."""

    row: int
    start: int
    end: int
    text: str


def noqa_edit(source: str, row: int, code: str) -> LineEdit | None:
    """The edit that silences ``code`` on ``row`` (see :func:`noqa_edits`)."""
    return noqa_edits(source, {row: {code}}).get(row)


def noqa_edits(source: str, codes_by_row: Mapping[int, Iterable[str]]) -> dict[int, LineEdit]:
    """The edit that silences each row's codes (rows whose comment goes on one line share
    its one edit), as ruff's ``--add-noqa`` writes them: ``# noqa: CODE`` at the end of the line (of the string's last line for
    a row inside a multi-line string, of the last line of a backslash continuation), or
    the codes merged into the ``# noqa: ...`` (or ``# aliaslint: ignore[...]``) list
    already there: its codes kept, the new added, sorted, each once.  A row where no
    comment can go (the source does not tokenize there) gets no edit."""
    lines = split_lines(source)
    tokens = _tokens(source)
    carried = _carried_rows(tokens) if tokens is not None else {}
    wanted: dict[int, set[str]] = {}
    for row, codes in codes_by_row.items():
        if 1 <= row <= len(lines):
            wanted.setdefault(carried.get(row, row), set()).update(codes)
    edits: dict[int, LineEdit] = {}
    comments = {token.start[0]: token for token in tokens or ()
                if token.type == tokenize.COMMENT}
    for row, codes in sorted(wanted.items()):
        line = lines[row - 1]
        if tokens is None and ("#" in line or "'" in line or '"' in line
                               or line.rstrip().endswith("\\")):
            # IPython syntax in a notebook cell, say: only a plain line is safe to end.
            continue
        comment = comments.get(row)
        edit = _merged(comment, codes) if comment is not None else None
        if edit is None:
            if comment is None and line.rstrip().endswith("\\"):
                continue
            content = len(line.rstrip())
            edit = LineEdit(row, content, len(line), f"  # noqa: {', '.join(sorted(codes))}")
        elif not edit.text:
            continue  # a bare `# noqa` there silences every code already
        edits[row] = replace(edit, row=row)
    return {row: edits[carried.get(row, row)] for row in codes_by_row
            if carried.get(row, row) in edits}


def _merged(comment: tokenize.TokenInfo, codes: set[str]) -> LineEdit | None:
    """The edit that adds ``codes`` to the list of a suppression in ``comment``; one that
    changes nothing (empty text) for a bare ``# noqa``; None when it has no suppression."""
    text = comment.string
    for pattern in (_NOQA, _IGNORE):
        match = pattern.search(text)
        if match is None:
            continue
        if match.group("codes") is None:
            if pattern is _NOQA:
                return LineEdit(0, 0, 0, "")
            continue  # a bare `# aliaslint: ignore` is not a list to add to
        listed = re.findall(r"[A-Za-z]+[0-9]+", match.group("codes"))
        merged = ", ".join(sorted({*(code.upper() for code in listed), *codes}))
        start = comment.start[1] + match.start("codes")
        return LineEdit(0, start, comment.start[1] + match.end("codes"), merged)
    return None


def unsuppressed(suppressions: Suppressions, located: list[tuple[Diagnostic, int]]
                 ) -> list[Diagnostic]:
    """The findings no comment silences; each comment records what it silenced."""
    return [diagnostic for diagnostic, statement_row in located
            if not suppressions.suppresses(diagnostic.code,
                                           (diagnostic.location.row, statement_row))]


def unused_findings(suppressions: Suppressions, enabled, filename: str,
                    used: bool = False) -> list[Diagnostic]:
    """An AL901 finding for each suppression that silenced nothing; with ``used``, the ones
    its file's own check would report for the suppressions that silenced something here."""
    from aliaslint import registry  # the rules import this module's users

    known = registry.briefs()
    found = []
    for directive, code in suppressions.used() if used else suppressions.unused():
        start = Position(directive.row, directive.column)
        end = Position(directive.row, directive.end_column)
        if code is None:
            message = f"unused suppression `{directive.text.strip()}`: nothing to silence here"
        elif code not in known:
            message = f"suppression names unknown rule `{code}`"
        elif code not in enabled:
            message = f"suppression of `{code}` is unused: the rule is not enabled"
        else:
            message = f"unused suppression of `{code}`: no {code} finding on this line"
        found.append(Diagnostic(UNUSED_SUPPRESSION, message, filename, start, end))
    return found
