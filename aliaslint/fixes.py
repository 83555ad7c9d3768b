"""Fixes: from a rule's plan to text edits, and applying them to a file's text.

A check describes its rewrite as a :class:`~aliaslint.rule.FixPlan` over the CST it was
given; :func:`located` turns that into a :class:`~aliaslint.diagnostics.Fix` of row/column
edits (what the JSON and SARIF outputs carry), and :func:`fix_text` applies the allowed ones,
pass after pass, the way ruff does: fixes that overlap wait for the next pass, a pass whose
result does not compile is undone fix by fix, and the file is checked again after each pass.
"""

from __future__ import annotations

import difflib
import io
import tokenize
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

import libcst as cst

from aliaslint.diagnostics import Diagnostic, Edit, Fix, Position
from aliaslint.rule import Context, Finding
from aliaslint.screen import compile_error

# Passes over one file before giving up on fixes that keep producing new ones.
MAX_PASSES = 10


def located(finding: Finding, context: Context) -> Fix | None:
    """The finding's fix as edits in 1-based rows and columns; None when it has none.
    A low-confidence finding's fix is only shown, never applied."""
    plan = finding.fix
    if plan is None:
        return None
    edits = [Edit(text, *context.location(node)) for node, text in plan.replacements]
    for module in plan.imports:
        insertion = _import_edit(context.module, context, module)
        if insertion is not None:
            edits.append(insertion)
    applicability = plan.applicability if finding.confidence == "high" else "display-only"
    return Fix(plan.message, applicability, tuple(sorted(edits, key=lambda e: e.location)))


def _import_edit(module: cst.Module, context: Context, name: str) -> Edit | None:
    """`import name` above the first statement that is not the docstring or a
    `from __future__` import; None when the module already imports it at top level."""
    body = list(module.body)
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Import) and any(
                        alias.asname is None and isinstance(alias.name, cst.Name)
                        and alias.name.value == name for alias in small.names):
                    return None
    index = 0
    while index < len(body) and _preamble(body[index], first=index == 0):
        index += 1
    if index == len(body):
        row = context.span(body[-1]).end.line + 1 if body else 1
    else:
        statement = body[index]
        # Above the statement's own leading comments: they belong to it.
        row = context.span(statement).start.line
    position = Position(row, 1)
    return Edit(f"import {name}\n", position, position)


def _preamble(statement: cst.BaseStatement, *, first: bool) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    if first and isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString):
        return True  # the module docstring
    return isinstance(small, cst.ImportFrom) and isinstance(small.module, cst.Name) and \
        small.module.value == "__future__"


@dataclass
class Outcome:
    """What fixing one file's text did."""

    text: str
    fixed: Counter[str] = field(default_factory=Counter)  # code → fixes applied
    # Fixes left out because the code they produce does not compile: their messages.
    dropped: list[str] = field(default_factory=list)


def fix_text(text: str, filename: str, check: Callable[[str], list[Diagnostic]],
             allowed: Callable[[Diagnostic], bool]) -> Outcome:
    """Apply every allowed fix to ``text`` (``check`` re-checks a text), pass by pass."""
    outcome = Outcome(text)
    refused: set[tuple] = set()
    for _ in range(MAX_PASSES):
        candidates = [d for d in check(outcome.text)
                      if d.fix is not None and d.fix.edits and allowed(d)
                      and _key(d) not in refused]
        chosen = _non_overlapping(candidates)
        if not chosen:
            break
        new = apply_edits(outcome.text, _edits(chosen))
        if not compiles(new, filename):
            # Keep the fixes that compile on their own; the rest are reported, not written.
            kept = []
            for diagnostic in chosen:
                alone = apply_edits(outcome.text, _edits([diagnostic]))
                if compiles(alone, filename):
                    kept.append(diagnostic)
                else:
                    refused.add(_key(diagnostic))
                    outcome.dropped.append(
                        f"{diagnostic.code} at {diagnostic.location.row}:"
                        f"{diagnostic.location.column}: {diagnostic.fix.message}"  # type: ignore[union-attr]
                        " (the result would not compile)")
            chosen = _non_overlapping(kept)
            if not chosen:
                continue
            new = apply_edits(outcome.text, _edits(chosen))
            if not compiles(new, filename):
                break
        if new == outcome.text:
            break
        outcome.text = new
        outcome.fixed.update(d.code for d in chosen)
    return outcome


def _edits(diagnostics: Iterable[Diagnostic]) -> list[Edit]:
    return [edit for d in diagnostics if d.fix is not None for edit in d.fix.edits]


def _key(diagnostic: Diagnostic) -> tuple:
    return (diagnostic.code, diagnostic.location, diagnostic.message)


def _non_overlapping(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """The fixes to apply in this pass: in file order, each one whose edits touch none
    already taken (an insertion at one point counts as touching it)."""
    taken: list[tuple[Position, Position]] = []
    chosen = []
    for diagnostic in sorted(diagnostics, key=lambda d: d.sort_key):
        spans = [(e.location, e.end_location) for e in _edits([diagnostic])]
        if any(_touch(a, b) for a in spans for b in taken) or any(
                _touch(a, b) for i, a in enumerate(spans) for b in spans[i + 1:]):
            continue
        taken.extend(spans)
        chosen.append(diagnostic)
    return chosen


def _touch(a: tuple[Position, Position], b: tuple[Position, Position]) -> bool:
    if a[0] == a[1] and b[0] == b[1]:
        return a[0] == b[0]
    return a[0] < b[1] and b[0] < a[1] or a[0] == b[0]


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """``text`` with each edit's span replaced by its content (spans must not overlap)."""
    starts = [0]
    for index, char in enumerate(text):
        if char == "\n":
            starts.append(index + 1)

    def offset(position: Position) -> int:
        row = min(max(position.row, 1), len(starts) + 1)
        if row > len(starts):
            return len(text)
        return min(starts[row - 1] + position.column - 1, len(text))

    pieces = []
    last = len(text)
    for edit in sorted(edits, key=lambda e: (e.location, e.end_location), reverse=True):
        start, end = offset(edit.location), offset(edit.end_location)
        pieces.append(text[end:last])
        pieces.append(edit.content)
        last = start
    pieces.append(text[:last])
    return "".join(reversed(pieces))


def compiles(text: str, filename: str) -> bool:
    """Would the checker accept the fixed text (CPython's own verdict, as for any file)?"""
    return compile_error(text, filename) is None



@dataclass
class FileFix:
    """Fixing one file: its findings after the fixes, what was fixed, and the diff."""

    filename: str
    remaining: list[Diagnostic]
    outcome: Outcome | None = None
    diff: str = ""
    # Why the fixed text was not written (the file changed on disk meanwhile), or None.
    not_written: str | None = None


def fix_file(path: Path, filename: str, check: Callable[[str], list[Diagnostic]],
             allowed: Callable[[Diagnostic], bool], *, write: bool) -> FileFix | None:
    """Fix the file at ``path`` (a Python file; None for anything else, or a file that cannot
    be read or decoded, whose findings the plain check already has). The text is written back
    in its own encoding, byte-order mark and line endings, and only if the file still holds
    what was read."""
    if path.suffix != ".py":
        return None
    try:
        data = path.read_bytes()
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
    except (OSError, SyntaxError, UnicodeDecodeError, LookupError):
        return None
    newline = "\r\n" if "\r\n" in text else "\n"

    def check_text(candidate: str) -> list[Diagnostic]:
        found = check(candidate)
        if newline == "\n":
            return found
        # New lines a fix adds (`import copy`) take the file's own line ending.
        return [replace(d, fix=replace(d.fix, edits=tuple(
            replace(e, content=e.content.replace("\n", newline)) for e in d.fix.edits)))
            if d.fix is not None else d for d in found]

    outcome = fix_text(text, filename, check_text, allowed)
    if outcome.text == text:
        return FileFix(filename, check(text), outcome)
    diff = "".join(difflib.unified_diff(
        text.splitlines(keepends=True), outcome.text.splitlines(keepends=True),
        fromfile=filename, tofile=filename))
    result = FileFix(filename, check(outcome.text), outcome, diff)
    if write:
        try:
            if path.read_bytes() != data:
                result.not_written = "the file changed on disk while it was being fixed"
            else:
                path.write_bytes(outcome.text.encode(encoding))
        except OSError as error:
            result.not_written = f"cannot write the file: {error.strerror or error}"
    return result
