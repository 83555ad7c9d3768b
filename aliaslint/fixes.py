"""Fixes: from a rule's plan to text edits, and applying them to a file's text.

A check describes its rewrite as a :class:`~aliaslint.rule.FixPlan` over the CST it was
given; :func:`located` turns that into a :class:`~aliaslint.diagnostics.Fix` of row/column
edits (what the JSON and SARIF outputs carry), and :func:`fix_text` applies the allowed ones,
pass after pass, the way ruff does: fixes that overlap wait for the next pass, a pass whose
result does not compile is undone fix by fix, and the file is checked again after each pass.
"""

from __future__ import annotations

import builtins
import codecs
import difflib
import io
import json
import keyword
import re
import tokenize
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import (
    BaseAssignment,
    BuiltinAssignment,
    ImportAssignment,
    MetadataWrapper,
    PositionProvider,
    ScopeProvider,
)

from aliaslint.config import FixPolicy
from aliaslint.diagnostics import FILE_NOT_CHECKED, Diagnostic, Edit, Fix, Position
from aliaslint.lines import Lines, split_keepends, usual_break
from aliaslint.parsing import parse_module
from aliaslint.rule import Context, Finding
from aliaslint.screen import compile_error
from aliaslint.writes import replace_content

# Passes over one file before giving up on fixes that keep producing new ones.
MAX_PASSES = 10


def located(finding: Finding, context: Context) -> Fix | None:
    """The finding's fix as edits in 1-based rows and columns; None when it has none.
    A low-confidence finding's fix is only shown, never applied."""
    plan = finding.fix
    if plan is None:
        return None
    edits = [Edit(text, *context.location(node)) for node, text in plan.replacements]
    first = min((edit.location for edit in edits), default=Position(1, 1))
    for module in plan.imports:
        insertion = _import_edit(context.module, context, module, first)
        if insertion is not None:
            edits.append(insertion)
    applicability = plan.applicability if finding.confidence == "high" else "display-only"
    return Fix(plan.message, applicability, tuple(sorted(edits, key=lambda e: e.location)))


def under(policy: FixPolicy, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """The findings with each fix's class as the fix settings make it."""
    result = []
    for d in diagnostics:
        if d.fix is not None:
            applicability = policy.applicability(d.code, d.fix.applicability)
            if applicability != d.fix.applicability:
                d = replace(d, fix=replace(d.fix, applicability=applicability))
        result.append(d)
    return result


def _import_edit(module: cst.Module, context: Context, name: str,
                 use: Position) -> Edit | None:
    """`import name` (`name` may be `copy as _copy`) above the first statement that is not
    the docstring or a `from __future__` import; None when the module imports it so at top
    level before ``use`` (a notebook's cells run in order: an import in a later cell comes
    too late)."""
    imported, _, alias = name.partition(" as ")
    body = list(module.body)
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine) and \
                context.span(statement).start.line < use.row:
            for small in statement.body:
                if isinstance(small, cst.Import) and any(
                        isinstance(item.name, cst.Name) and item.name.value == imported and (
                            item.asname is None if not alias else
                            item.asname is not None and isinstance(item.asname.name, cst.Name)
                            and item.asname.name.value == alias)
                        for item in small.names):
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
    # Fixes left out because the text they produce is refused (see `verify`): their messages.
    dropped: list[str] = field(default_factory=list)
    # Each pass: the text it started from and the edits it made there (by cell, 0 for a
    # Python file), so what changed can be held against what the edits name.
    passes: list[tuple[str, tuple[tuple[int, Edit], ...]]] = field(default_factory=list)
    # Each finding whose fix was refused (see `_same_finding`) → why.
    refused: dict[tuple, str] = field(default_factory=dict)

    def refuse(self, diagnostic: Diagnostic, problem: str) -> None:
        where = f"{diagnostic.location.row}:{diagnostic.location.column}"
        if diagnostic.cell is not None:
            where = f"cell {diagnostic.cell}, {where}"
        assert diagnostic.fix is not None
        self.dropped.append(f"{diagnostic.code} at {where}: {diagnostic.fix.message} ({problem})")
        self.refused[_same_finding(diagnostic)] = problem

    def unfixable(self, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
        """The findings left, each whose fix was refused shown as not fixable, with why."""
        result = []
        for d in diagnostics:
            problem = self.refused.get(_same_finding(d))
            if problem is not None and d.fix is not None:
                d = replace(d, fix=replace(d.fix, applicability="display-only",
                                           message=f"{d.fix.message} (not applied: {problem})"))
            result.append(d)
        return result


class Document:
    """How fixes reach one kind of file: a Python file's text."""

    def __init__(self, filename: str):
        self.filename = filename

    def apply(self, text: str, diagnostics: list[Diagnostic]) -> str:
        return apply_edits(text, _edits(diagnostics))

    def valid(self, text: str) -> bool:
        """Would the checker accept the fixed text (CPython's own verdict, as for any file)?"""
        return compile_error(text, self.filename) is None

    def python(self, text: str) -> tuple[str, Callable[[int, int], int]] | None:
        """The Python source of ``text``, and a finding's (cell, row) as a row of it."""
        return text, lambda cell, row: row


class NotebookLayoutError(ValueError):
    """A notebook whose JSON would not be written back byte for byte where unchanged."""


class NotebookDocument(Document):
    """A notebook's JSON: each fix edits the source of its finding's cell, and the JSON is
    written back in the layout it was read in (indentation, key order, escaping), so
    outputs, metadata and every untouched cell stay byte for byte as they were."""

    def __init__(self, filename: str, text: str):
        super().__init__(filename)
        self._dump = _json_layout(text)
        self._broken = self._broken_cells(text)

    def apply(self, text: str, diagnostics: list[Diagnostic]) -> str:
        data = json.loads(text)
        by_cell: dict[int, list[Diagnostic]] = {}
        for diagnostic in diagnostics:
            if diagnostic.cell is not None:
                by_cell.setdefault(diagnostic.cell, []).append(diagnostic)
        for number, found in by_cell.items():
            cell = data["cells"][number - 1]
            cell["source"] = _edited_cell(cell["source"], _edits(found))
        return self._dump(data)

    def valid(self, text: str) -> bool:
        # A cell that did not compile before is left out of the check, as in any run;
        # only a cell that compiled and no longer does refuses the fix.
        return self._broken_cells(text) <= self._broken

    def python(self, text: str) -> tuple[str, Callable[[int, int], int]] | None:
        from aliaslint.notebooks import load_notebook  # notebooks only

        try:
            notebook = load_notebook(text)
        except ValueError:
            return None
        first = {cell.number: cell.first_row for cell in notebook.cells}
        return notebook.module(), lambda cell, row: first.get(cell, 1) + row - 1

    def _broken_cells(self, text: str) -> set[int]:
        from aliaslint.notebooks import load_notebook

        return {cell.number for cell in load_notebook(text).cells
                if compile_error(cell.masked, self.filename, top_level_await=True)}


def _json_layout(text: str) -> Callable[[object], str]:
    """The function that writes a notebook's JSON the way ``text`` is written: the
    indentation and escaping of the file, keys in the order read, its final newline."""
    data = json.loads(text)
    indent = re.match(r"\{\r?\n( +)\"", text)
    # JSON strings escape their control characters: a raw CR is the file's line ending.
    newline = "\r\n" if "\r\n" in text else "\n"
    body = text.rstrip("\r\n")
    ending = text[len(body):]
    for ensure_ascii in (False, True):
        def dump(value: object, ensure_ascii: bool = ensure_ascii) -> str:
            return json.dumps(value, indent=len(indent.group(1)) if indent else None,
                              ensure_ascii=ensure_ascii).replace("\n", newline) + ending
        if dump(data) == text:
            return dump
    raise NotebookLayoutError("its JSON is not laid out the way notebook editors write it "
                              "(indentation or escaping), so it cannot be written back "
                              "unchanged around the fixes")


def _edited_cell(source: str | list[str], edits: Iterable[Edit]) -> str | list[str]:
    """A cell's ``source`` (text or list of lines, as stored) with edits made on the
    text the checker read (its line breaks made ``\\n``, which moves no row or column, and
    a final one added); the rows the edits leave keep their own line breaks."""
    text = "".join(source) if isinstance(source, list) else source
    newline = usual_break(text)
    if newline != "\n":
        edits = [replace(edit, content=edit.content.replace("\n", newline)) for edit in edits]
    final = text.endswith(("\n", "\r"))
    new = apply_edits(text if final else text + newline, edits)
    if not final and new.endswith(newline):
        new = new[:-len(newline)]
    return split_keepends(new) if isinstance(source, list) else new


def fix_text(text: str, filename: str, check: Callable[[str], list[Diagnostic]],
             allowed: Callable[[Diagnostic], bool],
             document: Document | None = None) -> Outcome:
    """Apply every allowed fix to ``text`` (``check`` re-checks a text), pass by pass.  Every
    text a pass would produce is judged by :func:`verify`; a fix it refuses is left out and
    said in ``Outcome.dropped``, and its finding stays, not fixable."""
    document = document or Document(filename)
    outcome = Outcome(text)
    refused: set[tuple] = set()
    found = check(text)
    for _ in range(MAX_PASSES):
        candidates = [d for d in found
                      if d.fix is not None and d.fix.edits and allowed(d)
                      and _key(d) not in refused]
        chosen = _non_overlapping(candidates)
        if not chosen:
            break
        new = document.apply(outcome.text, chosen)
        verdict = verify(outcome.text, new, chosen, found, check, document)
        if verdict.problem is not None:
            # Keep each fix that passes together with those kept before it; the rest
            # are reported, not written.
            kept: list[Diagnostic] = []
            verdict = Verdict(None, found)
            for diagnostic in chosen:
                trial = document.apply(outcome.text, [*kept, diagnostic])
                judged = verify(outcome.text, trial, [*kept, diagnostic], found, check,
                                document)
                if judged.problem is None:
                    kept.append(diagnostic)
                    new, verdict = trial, judged
                else:
                    refused.add(_key(diagnostic))
                    outcome.refuse(diagnostic, judged.problem)
            chosen = kept
            if not chosen:
                continue
        if new == outcome.text:
            break
        outcome.passes.append((outcome.text, tuple(
            dict.fromkeys((d.cell or 0, e) for d in chosen if d.fix for e in d.fix.edits))))
        outcome.text, found = new, verdict.found
        outcome.fixed.update(d.code for d in chosen)
    return outcome


def _same_finding(diagnostic: Diagnostic) -> tuple:
    """A finding as it is still known after other fixes moved rows: its code, cell and
    message, the line numbers the message quotes left out."""
    return (diagnostic.code, diagnostic.cell, re.sub(r"\d+", "#", diagnostic.message))


@dataclass(frozen=True)
class Verdict:
    """What :func:`verify` found: why the fixed text is refused (None: it is accepted), and
    the findings of the fixed text (the next pass starts from them)."""

    problem: str | None
    found: list[Diagnostic]


def verify(before: str, after: str, applied: list[Diagnostic], found: list[Diagnostic],
           check: Callable[[str], list[Diagnostic]], document: Document) -> Verdict:
    """Judge ``after``: ``before`` with the fixes of ``applied`` made (``found``: the findings
    of ``before``).  The fixed text is refused when

    * an edit would not fall on the text its rows and columns name (the span it replaces
      does not hold as many line breaks, or on one row as many characters, as they say);
    * it does not compile (CPython's verdict; for the file's target Python, the re-check's
      AL902);
    * the re-check reports, on the rows the edits wrote, a finding of some code more often
      than ``before`` had on the rows they replaced, the fixed findings not counted: a fix
      that makes a new hazard, or one that does not remove its own;
    * a name the edits bring in (one the replaced text did not use) is not bound, where it is
      read, to what the fix means: the module of that name (`copy` → `import copy`), the
      alias an edit imports (`import copy as _copy`), a builtin, or an import (a function's
      out-of-place twin).  A parameter `copy=False` or a local `torch = ...` refuses it."""
    misplaced = _misplaced(before, applied, document)
    if misplaced is not None:
        return Verdict(misplaced, [])
    if not document.valid(after):
        return Verdict("the result would not compile", [])
    after_found = check(after)
    errors = Counter(d.message for d in found if d.code == FILE_NOT_CHECKED)
    for d in after_found:
        if d.code == FILE_NOT_CHECKED:
            if errors[d.message] <= 0:
                return Verdict(f"the result would not be checked: {d.message}", after_found)
            errors[d.message] -= 1
    replaced, written = _regions(applied)
    fixed = {id(d) for d in applied}

    def touches(d: Diagnostic, rows: dict[int, set[int]]) -> bool:
        return not rows.get(d.cell or 0, set()).isdisjoint(
            range(d.location.row, d.end_location.row + 1))

    was = Counter(d.code for d in found if id(d) not in fixed and touches(d, replaced))
    now = Counter(d.code for d in after_found if touches(d, written))
    for d in after_found:
        if now[d.code] > was[d.code] and touches(d, written):
            return Verdict(f"the fixed code would be reported as {d.code} at line "
                           f"{d.location.row}: {d.message.split(' · ')[0]}", after_found)
    return Verdict(_misbound(before, after, applied, written, document), after_found)


_BREAK = re.compile(r"\r\n|\r|\n")


def _misplaced(before: str, applied: list[Diagnostic], document: Document) -> str | None:
    python = document.python(before)
    if python is None:
        return None
    source, module_row = python
    for d in applied:
        for edit in d.fix.edits if d.fix is not None else ():
            start = replace(edit.location, row=module_row(d.cell or 0, edit.location.row))
            end = replace(edit.end_location, row=module_row(d.cell or 0, edit.end_location.row))
            old = replaced_text(source, replace(edit, location=start, end_location=end))
            rows = end.row - start.row
            if len(_BREAK.findall(old)) != rows or not rows and \
                    len(old) != end.column - start.column:
                return (f"its edit at {edit.location.row}:{edit.location.column} would not "
                        "fall where its rows and columns say")
    return None


def _regions(applied: Iterable[Diagnostic]) -> tuple[dict[int, set[int]], dict[int, set[int]]]:
    """The rows the edits replace (in the text before) and the rows they write (in the text
    after), by cell (0 for a Python file)."""
    by_cell: dict[int, set[Edit]] = {}
    for d in applied:
        if d.fix is not None:
            by_cell.setdefault(d.cell or 0, set()).update(d.fix.edits)
    replaced: dict[int, set[int]] = {}
    written: dict[int, set[int]] = {}
    for cell, edits in by_cell.items():
        shift = 0
        for edit in sorted(edits, key=lambda e: (e.location, e.end_location)):
            first, last = edit.location.row, edit.end_location.row
            replaced.setdefault(cell, set()).update(range(first, last + 1))
            breaks = edit.content.count("\n")
            # A whole line inserted (`import copy\n` at a line's start) writes that line only.
            ends = breaks - (edit.content.endswith("\n") and edit.location.column == 1)
            written.setdefault(cell, set()).update(
                range(first + shift, first + shift + max(ends, 0) + 1))
            shift += breaks - (last - first)
    return replaced, written


_IDENTIFIER = re.compile(r"(?<![\w.])([A-Za-z_]\w*)")
_STRING = re.compile(r"""(?s)('''.*?'''|""" + '"""' + r""".*?""" + '"""' +
                     r"""|'[^'\n]*'|"[^"\n]*")""")
_IMPORT = re.compile(r"^import ([\w.]+)(?: as (\w+))?\s*$")
_KEYWORDS = frozenset(keyword.kwlist) - {"True", "False", "None"}
_BUILTINS = frozenset(dir(builtins))


def _introduced(before: tuple[str, Callable[[int, int], int]], applied: list[Diagnostic]
                ) -> dict[tuple[int, str], str]:
    """(cell, name) → what each name the edits bring in must be bound to: a module's name,
    "builtins", or "" for any import.  ``before``: the Python source before the edits, and
    how a (cell, row) maps to its rows."""
    source, module_row = before
    intended: dict[tuple[int, str], str] = {}
    for d in applied:
        assert d.fix is not None
        imported: dict[str, str] = {}
        for edit in d.fix.edits:
            match = _IMPORT.match(edit.content)
            if match:
                module, alias = match.groups()
                imported[alias or module.split(".")[0]] = module if alias else \
                    module.split(".")[0]
        for edit in d.fix.edits:
            if _IMPORT.match(edit.content):
                continue
            cell = d.cell or 0
            old_text = replaced_text(source, replace(
                edit, location=replace(edit.location, row=module_row(cell, edit.location.row)),
                end_location=replace(edit.end_location,
                                     row=module_row(cell, edit.end_location.row))))
            old = set(_IDENTIFIER.findall(_STRING.sub("", old_text)))
            for name in set(_IDENTIFIER.findall(_STRING.sub("", edit.content))) - old - _KEYWORDS:
                if name in imported:
                    intended[(d.cell or 0, name)] = imported[name]
                elif name in _BUILTINS:
                    intended[(d.cell or 0, name)] = "builtins"
                elif re.fullmatch(r"\w+", old_text):
                    intended[(d.cell or 0, name)] = ""  # `relu_` → `relu`: imported the same way
                else:
                    intended[(d.cell or 0, name)] = name
    return intended


def _misbound(before: str, after: str, applied: list[Diagnostic],
              written: dict[int, set[int]], document: Document) -> str | None:
    """Why a name the edits bring in would not mean what the fix means (see :func:`verify`);
    None when every one does."""
    original = document.python(before)
    intended = _introduced(original, applied) if original is not None else {}
    python = document.python(after) if intended else None
    if python is None:
        return None
    source, module_row = python
    try:
        wrapper = MetadataWrapper(parse_module(source), unsafe_skip_copy=True)
        scopes = wrapper.resolve(ScopeProvider)
        positions = wrapper.resolve(PositionProvider)
    except (cst.ParserSyntaxError, RecursionError):
        return "its names could not be resolved (libcst cannot parse the result)"
    rows = {key: {module_row(key[0], row) for row in written.get(key[0], ())}
            for key in intended}
    for node, scope in scopes.items():
        if not isinstance(node, cst.Name) or scope is None:
            continue
        for (cell, name), module in intended.items():
            if node.value != name or positions[node].start.line not in rows[(cell, name)]:
                continue
            accesses = [a for a in scope.accesses[name] if a.node is node]
            if not accesses:
                continue  # a name the edit binds (`y = y.mul(2)`), not one it reads
            want = "a builtin" if module == "builtins" else \
                "an import" if not module else f"the module `{module}`"
            referents = accesses[0].referents
            if not referents:
                return f"`{name}` would not be bound where the fix reads it (it means {want})"
            if not all(_binds(referent, name, module) for referent in referents):
                return (f"`{name}` where the fix reads it would not be {want}: the name is "
                        "bound to something else in that scope")
    return None


def _binds(referent: BaseAssignment, name: str, module: str) -> bool:
    if module == "builtins":
        return isinstance(referent, BuiltinAssignment)
    if not isinstance(referent, ImportAssignment):
        return False
    statement = referent.node
    if not module:
        return True
    if not isinstance(statement, cst.Import):
        return False
    for alias in statement.names:
        dotted = get_full_name_for_node(alias.name) or ""
        bound = alias.asname.name.value if alias.asname is not None and isinstance(
            alias.asname.name, cst.Name) else dotted.split(".")[0]
        if bound == name and (dotted == module or alias.asname is None
                              and dotted.split(".")[0] == module):
            return True
    return False


def replaced_text(text: str, edit: Edit) -> str:
    """The part of ``text`` an edit replaces, its rows and columns read as
    :func:`apply_edits` reads them."""
    marked = apply_edits(text, [replace(edit, content="")])
    start = next((i for i, (a, b) in enumerate(zip(text, marked)) if a != b),
                 len(marked))
    return text[start:start + len(text) - len(marked)]


def _edits(diagnostics: Iterable[Diagnostic]) -> tuple[Edit, ...]:
    """Their edits, each once (findings that one rewrite fixes share its edits)."""
    return tuple(dict.fromkeys(edit for d in diagnostics if d.fix is not None
                               for edit in d.fix.edits))


def _key(diagnostic: Diagnostic) -> tuple:
    return (diagnostic.code, diagnostic.cell, diagnostic.location, diagnostic.message)


def _non_overlapping(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """The fixes to apply in this pass: in file order, each one whose edits touch none
    already taken (an insertion at one point counts as touching it)."""
    taken: list[tuple[tuple[int, Position], tuple[int, Position]]] = []
    chosen = []
    applied: set[tuple] = set()
    for diagnostic in sorted(diagnostics, key=lambda d: d.sort_key):
        edits = _edits([diagnostic])
        if (diagnostic.cell, edits) in applied:  # one rewrite fixes several findings
            chosen.append(diagnostic)
            continue
        # A notebook's cells count rows from 1 each: a cell's edits meet only its own.
        cell = diagnostic.cell or 0
        spans = [((cell, e.location), (cell, e.end_location)) for e in edits]
        if any(_touch(a, b) for a in spans for b in taken) or any(
                _touch(a, b) for i, a in enumerate(spans) for b in spans[i + 1:]):
            continue
        taken.extend(spans)
        chosen.append(diagnostic)
        applied.add((diagnostic.cell, edits))
    return chosen


def _touch(a: tuple, b: tuple) -> bool:
    if a[0] == a[1] and b[0] == b[1]:
        return a[0] == b[0]
    return a[0] < b[1] and b[0] < a[1] or a[0] == b[0]


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """``text`` with each edit's span replaced by its content (spans must not overlap).
    Rows and columns count as everywhere else (:mod:`aliaslint.lines`): a lone ``\\r``
    ends a row as ``\\n`` and ``\\r\\n`` do."""
    lines = Lines(text)

    def offset(position: Position) -> int:
        return lines.offset(position.row, position.column)

    pieces = []
    last = len(text)
    for edit in sorted(edits, key=lambda e: (e.location, e.end_location), reverse=True):
        start = min(offset(edit.location), last)
        end = min(max(offset(edit.end_location), start), last)
        pieces.append(text[end:last])
        pieces.append(edit.content)
        last = start
    pieces.append(text[:last])
    return "".join(reversed(pieces))


@dataclass
class FileFix:
    """Fixing one file: its findings after the fixes, what was fixed, and the diff."""

    filename: str
    remaining: list[Diagnostic]
    outcome: Outcome | None = None
    diff: str = ""
    # Why the fixed text was not written (the file changed on disk meanwhile), or None.
    not_written: str | None = None
    write_failed: bool = False  # not written because writing failed (an I/O error)
    data: bytes | None = None  # the fixed file's bytes, when they differ


def fix_bytes(data: bytes, suffix: str, filename: str,
              check: Callable[[str], list[Diagnostic]],
              allowed: Callable[[Diagnostic], bool]) -> FileFix | None:
    """Fix a file's content (a Python file, or a notebook's JSON for ``.ipynb``); None for
    anything else, or content that cannot be decoded, whose findings the plain check
    already has.  The result keeps the encoding, byte-order mark and line endings."""
    if suffix not in (".py", ".ipynb"):
        return None
    try:
        if suffix == ".ipynb":
            encoding = "utf-8-sig" if data.startswith(codecs.BOM_UTF8) else "utf-8"
        else:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
    except (SyntaxError, UnicodeDecodeError, LookupError):
        return None
    document = Document(filename)
    if suffix == ".ipynb":
        try:
            document = NotebookDocument(filename, text)
        except (ValueError, RecursionError) as error:
            reason = str(error) if isinstance(error, NotebookLayoutError) else \
                "it is not a notebook that can be read"
            return FileFix(filename, check(text), not_written=reason)
    # A notebook's JSON escapes its newlines: only a Python file's own line endings show.
    # A line a fix adds takes the line ending the file uses most.
    newline = usual_break(text) if suffix == ".py" else "\n"

    def check_text(candidate: str) -> list[Diagnostic]:
        found = check(candidate)
        if newline == "\n":
            return found
        # New lines a fix adds (`import copy`) take the file's own line ending.
        return [replace(d, fix=replace(d.fix, edits=tuple(
            replace(e, content=e.content.replace("\n", newline)) for e in d.fix.edits)))
            if d.fix is not None else d for d in found]

    outcome = fix_text(text, filename, check_text, allowed, document)
    if outcome.text == text:
        return FileFix(filename, outcome.unfixable(check(text)), outcome)
    diff = "".join(difflib.unified_diff(
        split_keepends(text), split_keepends(outcome.text),
        fromfile=filename, tofile=filename))
    return FileFix(filename, outcome.unfixable(check(outcome.text)), outcome, diff,
                   data=outcome.text.encode(encoding))


def fix_file(path: Path, filename: str, check: Callable[[str], list[Diagnostic]],
             allowed: Callable[[Diagnostic], bool], *, write: bool,
             before_replace: Callable[[], None] | None = None) -> FileFix | None:
    """Fix the file at ``path`` (see :func:`fix_bytes`); with ``write``, the fixed content
    replaces the file's (:func:`aliaslint.writes.replace_content`) only if the file still
    holds what was read; ``not_written`` says why it was not (the caller counts its fixes
    as not done)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    result = fix_bytes(data, path.suffix, filename, check, allowed)
    if result is None or result.data is None or not write:
        return result
    failure = replace_content(path, data, result.data, before_replace or (lambda: None))
    if failure is not None:
        result.not_written = failure.reason
        result.write_failed = failure.failed
    return result
