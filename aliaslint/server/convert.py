"""Findings as the protocol shows them: diagnostics, code actions, hovers.

Findings count rows from 1 and columns from 1 in code points; LSP counts lines from 0 and
characters in the code units the client negotiated (UTF-16 unless it asked otherwise).
pygls' position codec converts between the two, line by line.

Code actions come from each finding's ``fix`` (when a rule provides one: safe fixes are
preferred, unsafe ones say so in their title) and a ``# noqa: ALnnn`` suppression; the
file's safe fixes together are ``source.fixAll.aliaslint``, which is also what fix on save
applies.  A finding without a fix gets the suppression only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from lsprotocol import types
from pygls.workspace import TextDocument, Workspace
from pygls.workspace.position_codec import PositionCodec

from aliaslint import catalog
from aliaslint.diagnostics import UNUSED_SUPPRESSION, Diagnostic, Edit, Position, Related
from aliaslint.lines import split as split_lines
from aliaslint.lines import split_keepends
from aliaslint.suppressions import noqa_edit

SOURCE = "aliaslint"
FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.{SOURCE}"
CODE_ACTION_KINDS = [types.CodeActionKind.QuickFix, FIX_ALL]


@dataclass(frozen=True)
class Text:
    """A document's URI and its lines, split where Python (and LSP) break lines."""

    uri: str
    lines: tuple[str, ...]

    @classmethod
    def of(cls, uri: str, source: str) -> Text:
        return cls(uri, tuple(split_lines(source)))

    @property
    def source(self) -> str:
        return "\n".join(self.lines)


class PythonLinesDocument(TextDocument):
    """pygls' document with its lines broken where LSP (and Python) break them.  pygls
    splits with ``str.splitlines``, which also breaks at a form feed, a vertical tab or
    U+2028: one of those in a comment would shift every later incremental edit by a line,
    and the buffer checked would no longer be the buffer shown."""

    @property
    def lines(self) -> Sequence[str]:
        return tuple(split_keepends(self.source))


def use_python_lines(workspace: Workspace) -> None:
    """Make ``workspace`` hold :class:`PythonLinesDocument` documents (pygls has no public
    way to choose the class; where its internals differ, its own documents are kept)."""
    sync_kind = getattr(workspace, "_sync_kind", None)
    if sync_kind is None or not hasattr(workspace, "_create_text_document"):
        return

    def create(doc_uri: str, source: str | None = None, version: int | None = None,
               language_id: str | None = None) -> TextDocument:
        return PythonLinesDocument(doc_uri, source=source, version=version,
                                   language_id=language_id, sync_kind=sync_kind,
                                   position_codec=workspace.position_codec)

    workspace._create_text_document = create  # type: ignore[method-assign]


@dataclass(frozen=True)
class Entry:
    """A finding, its LSP diagnostic, and the document it is in."""

    finding: Diagnostic
    diagnostic: types.Diagnostic
    text: Text


class Converter:
    def __init__(self, encoding: str | types.PositionEncodingKind | None = None):
        self.codec = PositionCodec(encoding or types.PositionEncodingKind.Utf16)

    def position(self, text: Text, position: Position) -> types.Position:
        # Rows below 1 (a finding about the whole file) go to the top.
        zero_based = types.Position(max(position.row - 1, 0), max(position.column - 1, 0))
        return self.codec.position_to_client_units(text.lines, zero_based)

    def range(self, text: Text, start: Position, end: Position) -> types.Range:
        return types.Range(self.position(text, start), self.position(text, end))

    def diagnostic(self, finding: Diagnostic, text: Text,
                   text_of_cell: Callable[[int | None], Text] | None = None,
                   text_of_file: Callable[[str], Text] | None = None) -> types.Diagnostic:
        """``finding`` in ``text``; a related location in another notebook cell is converted
        in that cell's text (``text_of_cell``), one in another file of the program in that
        file's (``text_of_file``, by the file's name)."""
        def related_text(related: Related) -> Text:
            if related.filename != finding.filename and text_of_file is not None:
                return text_of_file(related.filename)
            if text_of_cell is not None and related.cell is not None:
                return text_of_cell(related.cell)
            return text

        related = [
            types.DiagnosticRelatedInformation(
                location=types.Location(
                    uri=(where := related_text(r)).uri,
                    range=self.range(where, r.location, r.end_location),
                ),
                message=r.message,
            )
            for r in finding.related
        ]
        low = finding.confidence == "low"
        return types.Diagnostic(
            range=self.range(text, finding.location, finding.end_location),
            message=finding.message + (" (low confidence)" if low else ""),
            severity=(types.DiagnosticSeverity.Warning if low or finding.code == UNUSED_SUPPRESSION
                      else types.DiagnosticSeverity.Error),
            code=finding.code,
            code_description=types.CodeDescription(href=finding.url),
            source=SOURCE,
            related_information=related or None,
            tags=[types.DiagnosticTag.Unnecessary] if finding.code == UNUSED_SUPPRESSION else None,
        )

    def entries(self, findings: Iterable[Diagnostic], text: Text,
                text_of_cell: Callable[[int | None], Text] | None = None,
                text_of_file: Callable[[str], Text] | None = None) -> list[Entry]:
        return [Entry(finding, self.diagnostic(finding, text, text_of_cell, text_of_file), text)
                for finding in findings]

    # --- code actions -----------------------------------------------------------------------

    def text_edits(self, text: Text, edits: Iterable[Edit]) -> list[types.TextEdit]:
        return [types.TextEdit(self.range(text, edit.location, edit.end_location), edit.content)
                for edit in edits]

    def quick_fixes(self, entry: Entry) -> list[types.CodeAction]:
        """The finding's own fix, if it has one, then its suppression."""
        actions = []
        fix = entry.finding.fix
        if fix is not None and fix.applicability != "display-only":
            safe = fix.applicability == "safe"
            actions.append(types.CodeAction(
                title=f"{fix.message} ({entry.finding.code}{'' if safe else ', unsafe'})",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[entry.diagnostic],
                is_preferred=safe,
                edit=types.WorkspaceEdit(
                    changes={entry.text.uri: self.text_edits(entry.text, fix.edits)}),
            ))
        suppression = self.suppression(entry)
        if suppression is not None:
            actions.append(suppression)
        return actions

    def suppression(self, entry: Entry) -> types.CodeAction | None:
        code = entry.finding.code
        edit = noqa_edit(entry.text.source, entry.finding.location.row, code)
        if edit is None:
            return None
        start = Position(edit.row, edit.start + 1)
        end = Position(edit.row, edit.end + 1)
        return types.CodeAction(
            title=f"Suppress {code} with `# noqa: {code}`",
            kind=types.CodeActionKind.QuickFix,
            diagnostics=[entry.diagnostic],
            edit=types.WorkspaceEdit(changes={entry.text.uri: [
                types.TextEdit(self.range(entry.text, start, end), edit.text)]}),
        )

    def fix_all_findings(self, entries: Sequence[Entry]) -> list[Diagnostic]:
        """The findings whose safe fixes fix-all applies: each that overlaps no earlier one
        (as ``--fix`` does)."""
        chosen: list[Diagnostic] = []
        taken: list[Edit] = []
        for entry in sorted(entries, key=lambda e: e.finding.sort_key):
            fix = entry.finding.fix
            if fix is None or fix.applicability != "safe":
                continue
            if any(_overlaps(edit, other) for edit in fix.edits for other in taken):
                continue
            chosen.append(entry.finding)
            taken.extend(fix.edits)
        return chosen

    def fix_all_edits(self, entries: Sequence[Entry]) -> list[types.TextEdit]:
        """The edits of every safe fix of one document that overlaps no earlier one."""
        if not entries:
            return []
        edits = [edit for finding in self.fix_all_findings(entries)
                 for edit in finding.fix.edits]  # type: ignore[union-attr]
        return self.text_edits(entries[0].text, sorted(edits, key=lambda e: e.location))

    def fix_all(self, uri: str, entries: Sequence[Entry]) -> types.CodeAction | None:
        """The document's safe fixes as one action; None when there are none to apply."""
        edits = self.fix_all_edits(entries)
        if not edits:
            return None
        return types.CodeAction(
            title="aliaslint: fix all safe fixes",
            kind=FIX_ALL,
            edit=types.WorkspaceEdit(changes={uri: edits}),
        )


def _overlaps(a: Edit, b: Edit) -> bool:
    return a.location < b.end_location and b.location < a.end_location or a.location == b.location


def touches(a: types.Range, b: types.Range) -> bool:
    """Do the ranges share a position (ends included: a cursor at a finding's end counts)?"""
    def key(p: types.Position) -> tuple[int, int]:
        return (p.line, p.character)

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def hover(entries: Sequence[Entry], position: types.Position) -> types.Hover | None:
    """The documentation of every rule whose finding covers ``position``."""
    point = types.Range(position, position)
    hit = [entry for entry in entries if touches(entry.diagnostic.range, point)]
    if not hit:
        return None
    docs = catalog.load_docs()
    parts = []
    for code in dict.fromkeys(entry.finding.code for entry in hit):
        doc = docs.get(code)
        parts.append(doc.text.strip() if doc is not None else f"{code}: no documentation")
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown,
                                     value="\n\n---\n\n".join(parts)),
        range=hit[0].diagnostic.range,
    )
