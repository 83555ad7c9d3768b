"""`check --add-noqa`: a suppression comment on the line of every finding, written the way
`--fix` writes (each file whole or not at all, notebooks cell by cell in their own JSON
layout), so that the next run starts clean and reports only what is new."""

from __future__ import annotations

import os
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

from aliaslint.cli_output import EXIT_CLEAN, EXIT_ERROR
from aliaslint.diagnostics import META_CODES, Diagnostic, Edit, Fix, Position
from aliaslint.cli_fix import Recheck
from aliaslint.engine import NOTEBOOK_SUFFIX, Result, display_path
from aliaslint.fixes import fix_file
from aliaslint.notebooks import NotebookError, load_notebook
from aliaslint.suppressions import noqa_edits
from aliaslint.walk import WriteScope


def with_noqa_fixes(diagnostics: list[Diagnostic], text: str, notebook: bool
                    ) -> list[Diagnostic]:
    """The findings a `# noqa` can silence, each carrying as its fix the edit that adds its
    code to its line's comment (the findings of one line share that line's one edit)."""
    by_cell: dict[int | None, dict[int, set[str]]] = {}
    for d in diagnostics:
        if d.code not in META_CODES and d.location.row >= 1:
            by_cell.setdefault(d.cell, {}).setdefault(d.location.row, set()).add(d.code)
    sources: dict[int | None, tuple[str, list[str]]] = {}
    if notebook:
        try:
            cells = {cell.number: cell for cell in load_notebook(text).cells}
        except NotebookError:
            return []
        for number in by_cell:
            cell = cells.get(number) if number is not None else None
            if cell is not None:
                sources[number] = (cell.masked, cell.source.split("\n"))
    else:
        sources[None] = (text, [])
    edits: dict[tuple[int | None, int], Edit] = {}
    for cell_number, rows in by_cell.items():
        if cell_number not in sources:
            continue
        checked, written = sources[cell_number]
        masked = checked.split("\n") if written else []
        for row, line_edit in noqa_edits(checked, rows).items():
            # A line the checker read masked (IPython syntax) is not the line written.
            if written and written[line_edit.row - 1] != masked[line_edit.row - 1]:
                continue
            edits[cell_number, row] = Edit(line_edit.text,
                                           Position(line_edit.row, line_edit.start + 1),
                                           Position(line_edit.row, line_edit.end + 1))
    result = []
    for d in diagnostics:
        edit = edits.get((d.cell, d.location.row))
        if edit is not None and d.code not in META_CODES:
            result.append(replace(d, fix=Fix(f"add `# noqa: {d.code}`", "safe", (edit,))))
    return result


def add_noqa(args, cwd: Path, result: Result) -> int:
    """Add the suppressions to every checked file with findings; exit 2 when a file could
    not be checked or written, else 0."""
    wanted = {d.filename for d in result.diagnostics if d.code not in META_CODES}
    scope = WriteScope(args.paths or ["."], cwd)
    added: Counter[str] = Counter()
    done_at: set[str] = set()
    failed = False
    for path, settings in result.checked:
        filename = display_path(path, cwd)
        if filename not in wanted:
            continue
        refusal = scope.refusal(path)
        if refusal is not None:
            print(f"aliaslint: warning: {filename}: no noqa added: {refusal}", file=sys.stderr)
            continue
        real = os.path.realpath(path)
        if real in done_at:  # the same file by another name (a link)
            continue
        done_at.add(real)
        notebook = path.suffix == NOTEBOOK_SUFFIX

        def check(text: str, again=Recheck(result, path, filename, settings),
                  notebook=notebook) -> list[Diagnostic]:
            return with_noqa_fixes(again(text), text, notebook)

        done = fix_file(path, filename, check, lambda d: True, write=True)
        if done is None:
            continue
        if done.not_written is not None:
            print(f"aliaslint: error: {filename}: no noqa added: {done.not_written}",
                  file=sys.stderr)
            failed = failed or done.write_failed
            continue
        if done.outcome is not None:
            for message in done.outcome.dropped:
                print(f"aliaslint: warning: {filename}: not added: {message}", file=sys.stderr)
            if done.outcome.fixed:
                added[filename] = sum(done.outcome.fixed.values())
        for left in done.remaining:
            print(f"aliaslint: warning: {filename}:{left.location.row}: {left.code} could "
                  "not be silenced with a noqa comment", file=sys.stderr)
    count = sum(added.values())
    print(f"Added noqa for {count} finding{'s' if count != 1 else ''} in {len(added)} "
          f"file{'s' if len(added) != 1 else ''}.", file=sys.stderr)
    return EXIT_ERROR if result.could_not_check or failed else EXIT_CLEAN
