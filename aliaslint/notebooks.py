"""Jupyter notebooks as one Python module, and rows mapped back to their cells.

The code cells, in order, make the module.  IPython syntax that is not
Python (``%magic``, ``%%cell-magic``, ``!shell``, ``obj?`` help) is masked
line by line, so every row keeps its number and no magic becomes a syntax
error; lines inside strings or brackets are never mistaken for magics.
Cells are numbered from 1 counting every cell, markdown included, as
notebook editors show them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace

from aliaslint.diagnostics import Diagnostic, Edit, Position
from aliaslint.lines import normalise_line_breaks

# Cell magics whose body is Python: only their first line is masked.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug", "pypy"})

_HELP = re.compile(r"^\s*(?:\?{1,2}[\w.*]|[\w.\[\]()*]+\?{1,2}\s*$)")
# `files = !ls` and `t = %timeit -o f()`: the assignment stays, the magic becomes `...`.
_ASSIGNED_MAGIC = re.compile(r"^(\s*[\w.]+(?:\s*,\s*[\w.]+)*\s*=\s*)[!%]")


@dataclass(frozen=True)
class Cell:
    number: int  # 1-based, counting every cell
    first_row: int  # the cell's first row in the module
    source: str  # as written, magics included
    masked: str  # the Python the checker reads: same rows, magics masked


@dataclass(frozen=True)
class Notebook:
    cells: tuple[Cell, ...]  # code cells only

    def module(self, left_out: frozenset[int] = frozenset()) -> str:
        """The code cells as one module; cells in ``left_out`` become blank rows."""
        return "".join(
            "\n" * cell.masked.count("\n") if cell.number in left_out else cell.masked
            for cell in self.cells
        )

    def cell_at(self, row: int) -> tuple[int, int]:
        """(cell number, row within the cell) of a module row."""
        for cell in reversed(self.cells):
            if row >= cell.first_row:
                return cell.number, row - cell.first_row + 1
        return self.cells[0].number if self.cells else 1, row


class NotebookError(ValueError):
    """The file is not an nbformat 4 notebook; the message says why."""


def load_notebook(text: str) -> Notebook:
    try:
        data = json.loads(text)
    except ValueError as error:
        raise NotebookError(f"notebook is not valid JSON: {error}") from None
    except RecursionError:
        raise NotebookError("notebook is not valid nbformat: its JSON is nested too "
                            "deeply to read") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise NotebookError("notebook has no `cells` list (not an nbformat 4 notebook)")
    if data.get("nbformat") != 4:
        raise NotebookError(
            f"notebook format {data.get('nbformat')!r} is not supported (nbformat 4 is)"
        )
    cells = []
    row = 1
    for number, raw in enumerate(data["cells"], start=1):
        if not isinstance(raw, dict):
            raise NotebookError(f"cell {number} is not a JSON object")
        if raw.get("cell_type") != "code":
            continue
        source = raw.get("source", "")
        if isinstance(source, list) and all(isinstance(part, str) for part in source):
            source = "".join(source)
        if not isinstance(source, str):
            raise NotebookError(f"cell {number}: `source` is not text")
        source = normalise_line_breaks(source)
        if not source.strip():
            continue
        if not source.endswith("\n"):
            source += "\n"
        cells.append(Cell(number, row, source, mask_ipython(source)))
        row += source.count("\n")
    return Notebook(tuple(cells))


def is_python_notebook(text: str) -> bool:
    """False only for a notebook that declares a kernel language other than Python."""
    try:
        metadata = json.loads(text).get("metadata", {})
        language = (metadata.get("language_info", {}).get("name")
                    or metadata.get("kernelspec", {}).get("language"))
    except (ValueError, AttributeError, RecursionError):
        return True
    return not isinstance(language, str) or language.lower() in ("python", "python3", "ipython")


def cell_lines(text: str, cell: int) -> list[str] | None:
    """The rows of cell ``cell`` as written, for code frames."""
    try:
        notebook = load_notebook(text)
    except NotebookError:
        return None
    for candidate in notebook.cells:
        if candidate.number == cell:
            return candidate.source.split("\n")[:-1]
    return None


def mask_ipython(source: str) -> str:
    """``source`` with IPython-only lines replaced by Python of the same rows."""
    lines = source.split("\n")
    first = lines[0].lstrip()
    if first.startswith("%%"):
        name = first[2:].split(None, 1)[0] if first[2:].strip() else ""
        if name not in PYTHON_CELL_MAGICS:
            return "\n" * (len(lines) - 1)
        lines[0] = ""
    scanner = _Scanner()
    masked = []
    continued = False  # the previous masked line ended with a backslash
    for line in lines:
        if continued:
            continued = line.endswith("\\")
            masked.append("")
            continue
        if scanner.at_statement_start and _is_magic(line):
            indent = line[: len(line) - len(line.lstrip())]
            assigned = _ASSIGNED_MAGIC.match(line)
            masked.append(assigned.group(1) + "..." if assigned else indent + "pass")
            continued = line.endswith("\\")
            continue
        scanner.feed(line)
        masked.append(line)
    return "\n".join(masked)


def _is_magic(line: str) -> bool:
    stripped = line.lstrip()
    if not stripped:
        return False
    if stripped[0] == "%" or (stripped[0] == "!" and not stripped.startswith("!=")):
        return True
    return bool(_HELP.match(line) or _ASSIGNED_MAGIC.match(line))


class _Scanner:
    """Just enough of Python's tokenizer to know whether a line starts a statement:
    not inside brackets, a string, or after a backslash continuation."""

    def __init__(self) -> None:
        self.depth = 0
        self.quote: str | None = None  # the open triple quote
        self.backslash = False

    @property
    def at_statement_start(self) -> bool:
        return self.depth == 0 and self.quote is None and not self.backslash

    def feed(self, line: str) -> None:
        i, n = 0, len(line)
        self.backslash = False
        while i < n:
            if self.quote is not None:
                end = _closing(line, i, self.quote)
                if end < 0:
                    self.backslash = False
                    return
                i, self.quote = end, None
                continue
            ch = line[i]
            if ch == "#":
                return
            if ch in "([{":
                self.depth += 1
            elif ch in ")]}":
                self.depth = max(0, self.depth - 1)
            elif ch == "\\" and i == n - 1:
                self.backslash = True
            elif ch in "'\"":
                quote = line[i:i + 3] if line[i:i + 3] in ("'''", '"""') else ch
                end = _closing(line, i + len(quote), quote)
                if end < 0:
                    if len(quote) == 3:
                        self.quote = quote
                    return
                i = end
                continue
            i += 1


def _closing(line: str, start: int, quote: str) -> int:
    """The index just past ``quote`` closing a string that continues at ``start``, or -1."""
    i = start
    while True:
        j = line.find(quote, i)
        if j < 0:
            return -1
        backslashes = 0
        k = j - 1
        while k >= start and line[k] == "\\":
            backslashes += 1
            k -= 1
        if backslashes % 2 == 0:
            return j + len(quote)
        i = j + 1


def in_cell(diagnostic: Diagnostic, notebook: Notebook) -> Diagnostic:
    """A finding with module rows rewritten as rows within the notebook's cells."""
    if diagnostic.location.row < 1:
        return diagnostic
    cell, start, end = _cell_span(notebook, diagnostic.location, diagnostic.end_location)
    related = tuple(
        replace(r, location=r_start, end_location=r_end, cell=r_cell)
        for r in diagnostic.related
        if r.location.row >= 1
        for r_cell, r_start, r_end in [_cell_span(notebook, r.location, r.end_location)]
    ) + tuple(r for r in diagnostic.related if r.location.row < 1)
    fix = diagnostic.fix
    if fix is not None:
        edits = [_edit_in_cell(notebook, edit, cell) for edit in fix.edits]
        fix = replace(fix, edits=tuple(e for e in edits if e is not None)) \
            if None not in edits else None
    return replace(diagnostic, message=_cell_lines(diagnostic.message, notebook, cell),
                   location=start, end_location=end, related=related, cell=cell, fix=fix)


_LINE = re.compile(r"\bline (\d+)\b")


def _cell_lines(message: str, notebook: Notebook, cell: int) -> str:
    """A message's "line N" (a row of the cells joined) as the notebook shows it: the row
    in the finding's cell, or "cell C, line N" in another.  Quoted code is left alone."""
    def local(match: re.Match) -> str:
        where, row = notebook.cell_at(int(match.group(1)))
        return f"line {row}" if where == cell else f"cell {where}, line {row}"

    parts = message.split("`")
    return "`".join(_LINE.sub(local, part) if index % 2 == 0 else part
                    for index, part in enumerate(parts))


def _edit_in_cell(notebook: Notebook, edit: Edit, cell: int) -> Edit | None:
    """A fix's edit in rows of the finding's cell, where fixing edits the cell's source;
    None when it cannot stay there.  An `import` the fix adds at the top of the module
    goes to the top of the cell instead (after a cell magic's line)."""
    edit_cell, start, end = _cell_span(notebook, edit.location, edit.end_location)
    where = next(c for c in notebook.cells if c.number == edit_cell)
    if edit_cell != cell:
        if start != end or not edit.content.startswith("import "):
            return None
        where = next(c for c in notebook.cells if c.number == cell)
        row = 2 if where.source.startswith("%%") else 1
        return replace(edit, location=Position(row, 1), end_location=Position(row, 1))
    # The checker read IPython lines masked; an edit there would not meet the text written.
    source, masked = where.source.split("\n"), where.masked.split("\n")
    if any(source[row - 1] != masked[row - 1] for row in range(start.row, end.row + 1)
           if row <= len(source)):
        return None
    return replace(edit, location=start, end_location=end)


def _cell_span(notebook: Notebook, start: Position, end: Position):
    cell, row = notebook.cell_at(start.row)
    end_cell, end_row = notebook.cell_at(end.row)
    if end_cell != cell:  # never for a node, which cannot cross cells; keep the span sane
        end_row, end = row, start
    return cell, Position(row, start.column), Position(end_row, end.column)
