"""Parsing an edited buffer again without parsing what did not change (the language server).

A module is cut into chunks at top-level statement boundaries (CPython's tree says where
statements begin and end); each chunk is parsed alone by libcst and remembered by its text,
so after an edit only the chunks whose text changed are parsed, and the module is assembled
from the chunks' statements.  The parse of a chunk is the full parse's own: the lines before
a statement (blank lines, comments) are its ``leading_lines`` either way, every chunk is
parsed with the module's indentation and line ending, and a boundary is never put where
libcst could attach lines to the statement before (an indented comment after a block, a
``;``).  Positions are computed per chunk too, and kept with it.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from aliaslint.lines import first_break, rows
from aliaslint.nodes import children
from aliaslint.parsing import parse_module
from aliaslint.screen import statement_rows

_CONTINUED = re.compile(r"\\(\r\n|\r|\n)$")
Statement = cst.SimpleStatementLine | cst.BaseCompoundStatement
# Chunks remembered beyond those of the current text (a few edits' worth).
SPARE = 256


@dataclass
class Chunk:
    """Top-level statements as parsed from their text, their first row in the module, and
    their positions once asked (relative to the chunk, rows counted from 1)."""

    statements: tuple[Statement, ...]
    header: tuple[cst.EmptyLine, ...] = ()  # the module's header (first chunk only)
    footer: tuple[cst.EmptyLine, ...] = ()  # the module's footer (last chunk only)
    indented: bool = False  # holds an indented block, which fixes the module's indent
    indent: str = "    "
    trailing_newline: bool = True  # the module's (last chunk only)
    positions: Any = None
    nodes: set[int] | None = None


@dataclass
class StatementCache:
    """The chunks of the texts parsed lately, by text and place."""

    chunks: dict[tuple, Chunk] = field(default_factory=dict)
    # The texts of top-level statements CPython compiled (see screen._compile_statements).
    compiled: set[str] = field(default_factory=set)
    # The last text CPython's tree was kept of: (text, its rows, the tree).
    kept: tuple[str, tuple[str, ...], ast.Module] | None = None

    def syntax(self, source: str) -> ast.Module | None:
        """CPython's tree of ``source``, from the kept one: the top-level statements an edit
        left alone are the kept tree's own, the rest is parsed alone (``_syntax_again``).
        None when there is none kept or the changed part does not parse alone: the screen
        then parses the whole text (and says where an error is)."""
        if self.kept is None:
            return None
        text, old, tree = self.kept
        if source == text:
            return tree
        return _syntax_again(old, tree, source)

    def keep_syntax(self, source: str, tree: ast.Module) -> None:
        """Keep CPython's tree of ``source`` (made by the screen) for the next edit."""
        self.kept = (source, rows(source), tree)

    def parse(self, source: str, tree: ast.Module | None = None
              ) -> tuple[cst.Module, list[tuple[int, Chunk]]] | None:
        """The module libcst's ``parse_module`` would make, and its chunks with their
        first rows; None when CPython cannot parse the text (the full parse decides).
        ``tree``: CPython's tree of ``source`` where the caller has it (the screen made
        one), so that it is not parsed again."""
        bounds = _boundaries(source, tree)
        if bounds is None:
            return None
        newline = first_break(source)  # libcst takes it as the module's
        lines = rows(source)
        texts = ["".join(lines[start:end]) for start, end in bounds]
        indent: str | None = None
        used: dict[tuple, Chunk] = {}
        placed: list[tuple[int, Chunk]] = []
        for index, ((start, _), text) in enumerate(zip(bounds, texts)):
            place = (index == 0, index == len(texts) - 1)
            key = (text, place, indent, newline)
            chunk = self.chunks.get(key) or _parse_chunk(text, place, indent, newline)
            used[key] = chunk
            if indent is None and chunk.indented:
                indent = chunk.indent
            placed.append((start + 1, chunk))
        module = cst.Module(
            body=[statement for _, chunk in placed for statement in chunk.statements],
            header=list(placed[0][1].header) if placed else [],
            footer=list(placed[-1][1].footer) if placed else [],
            default_indent=indent or "    ",
            default_newline=newline,
            has_trailing_newline=placed[-1][1].trailing_newline if placed else False,
        )
        # The current chunks, then the newest others, up to SPARE of those.
        spare = [item for item in self.chunks.items() if item[0] not in used][-SPARE:]
        self.chunks = {**dict(spare), **used}
        return module, placed


def _boundaries(source: str, tree: ast.Module | None = None) -> list[tuple[int, int]] | None:
    """Line ranges (0-based, end exclusive) of the chunks: at most one per top-level
    statement, the lines before a statement going with it, and the lines after the last
    one with the last."""
    if tree is None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                parsed = compile(source, "<aliaslint>", "exec", ast.PyCF_ONLY_AST,
                                 dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            return None
        assert isinstance(parsed, ast.Module)
        tree = parsed
    lines = rows(source)
    if not tree.body:
        return [(0, len(lines))] if lines else []
    starts = [0]
    for before, statement in zip(tree.body, tree.body[1:]):
        first = statement_rows(statement)[0]
        end = statement_rows(before)[1]
        gap = lines[end:first - 1]
        # A boundary only where the lines between are blank or unindented comments: an
        # indented comment may belong to the block before, a `;` joins one line.
        if first > end and all(not line.strip() or line.startswith("#") for line in gap) \
                and not _CONTINUED.search(lines[end - 1]):
            starts.append(end)
    return [(start, end) for start, end in zip(starts, [*starts[1:], len(lines)])]


def _syntax_again(old: tuple[str, ...], tree: ast.Module, source: str) -> ast.Module | None:
    """CPython's tree of ``source``, an edit of the text whose rows and tree are given.

    The top-level statements wholly within the rows the edit kept at the start are the old
    tree's; where the edit kept the number of rows, so are those wholly within the rows it
    kept at the end (their positions did not move; the old tree is never changed).  The
    rows between are parsed alone, as a module, below as many blank rows as come before
    them.  That is the whole parse's tree: the cuts lie between top-level statements
    at the left margin (a statement alone on its rows), where the tokenizer keeps no
    state, and rows that parse alone form whole statements, which do not join the
    statements around them (a statement that begins at the margin cannot continue one
    before it).  None when the rows between do not parse alone, and for a future import
    that changes the grammar.
    """
    if "barry_as_FLUFL" in source:
        return None
    new = rows(source)
    limit = min(len(old), len(new))
    same_start = 0
    while same_start < limit and old[same_start] == new[same_start]:
        same_start += 1
    delta = len(new) - len(old)
    same_end = 0  # rows kept at the end: only where none moved
    if not delta:
        while same_end < limit - same_start and old[-1 - same_end] == new[-1 - same_end]:
            same_end += 1
    spans = [statement_rows(statement) for statement in tree.body]
    head = 0  # statements kept at the start
    while head < len(spans) and spans[head][1] <= same_start:
        head += 1
    # A statement kept must end on a row before the next one begins (not `a = 1; b = 2`).
    while head and head < len(spans) and spans[head][0] <= spans[head - 1][1]:
        head -= 1
    tail = len(spans)  # statements kept at the end, from this one
    if same_end:
        while tail > head and spans[tail - 1][0] > len(old) - same_end:
            tail -= 1
        while tail < len(spans) and tail > head and spans[tail][0] <= spans[tail - 1][1]:
            tail += 1
    start = spans[head - 1][1] if head else 0  # 0-based: the first row parsed
    end = spans[tail][0] - 1 if tail < len(spans) else len(new)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # Blank rows before the part put its statements at their rows (cheaper than
            # moving every node).
            part = compile("\n" * start + "".join(new[start:end]), "<aliaslint>", "exec",
                           ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None
    assert isinstance(part, ast.Module)
    return ast.Module(body=[*tree.body[:head], *part.body, *tree.body[tail:]],
                      type_ignores=[])


def _parse_chunk(text: str, place: tuple[bool, bool], indent: str | None,
                 newline: str) -> Chunk:
    first, last = place
    module = parse_module(text, cst.PartialParserConfig(default_newline=newline))
    statements = tuple(module.body)
    if indent is not None and module.default_indent != indent:
        # libcst's parser takes the indentation from the text, not from the config: a
        # block written as the chunk's first one was gets the module's own.
        statements = tuple(s.visit(_Reindent(module.default_indent, indent))  # type: ignore
                           for s in statements)
    header: tuple[cst.EmptyLine, ...] = tuple(module.header)
    if not first and statements:  # lines before the statement are its own in the module
        statements = (statements[0].with_changes(
            leading_lines=[*module.header, *statements[0].leading_lines]), *statements[1:])
        header = ()
    indented = any(_has_block(statement) for statement in statements)
    return Chunk(statements, header, tuple(module.footer) if last else (), indented,
                 module.default_indent, module.has_trailing_newline)


class _Reindent(cst.CSTTransformer):
    """Blocks as a module whose default indentation is ``module`` holds them."""

    def __init__(self, chunk: str, module: str):
        super().__init__()
        self.chunk, self.module = chunk, module

    def leave_IndentedBlock(self, original: cst.IndentedBlock,
                            updated: cst.IndentedBlock) -> cst.IndentedBlock:
        indent = self.chunk if updated.indent is None else updated.indent
        return updated.with_changes(indent=None if indent == self.module else indent)


def _has_block(statement: cst.CSTNode) -> bool:
    """Does a top-level statement open an indented block (the first INDENT of a module is
    the body of one of its clauses)?"""
    clauses: list[Any] = [statement]
    for name in ("orelse", "handlers", "finalbody", "cases"):
        value = getattr(statement, name, None)
        clauses += list(value) if isinstance(value, Sequence) else [value]
    while clauses:
        clause = clauses.pop()
        if clause is None:
            continue
        if isinstance(getattr(clause, "body", None), cst.IndentedBlock):
            return True
        orelse = getattr(clause, "orelse", None)  # elif chains nest
        if orelse is not None and orelse is not clause:
            clauses.append(orelse)
    return False


class ChunkPositions:
    """Node positions in an assembled module, computed for the chunk a node is in when
    asked, and kept with the chunk for the next edit."""

    def __init__(self, module: cst.Module, placed: list[tuple[int, Chunk]]):
        self.module, self.placed = module, placed

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        for first_row, chunk in self.placed:
            if chunk.nodes is None:
                chunk.nodes = _ids(chunk)
            if id(node) in chunk.nodes:
                if chunk.positions is None:
                    chunk.positions = _positions(self.module, chunk)
                span: CodeRange = chunk.positions[node]
                shift = first_row - 1
                return CodeRange((span.start.line + shift, span.start.column),
                                 (span.end.line + shift, span.end.column))
        raise KeyError(node)

    def __contains__(self, node: object) -> bool:
        # Without it, `in` would fall back to indexing by 0, 1, … and raise KeyError.
        for _, chunk in self.placed:
            if chunk.nodes is None:
                chunk.nodes = _ids(chunk)
            if id(node) in chunk.nodes:
                return True
        return False


def _ids(chunk: Chunk) -> set[int]:
    found: set[int] = set()
    stack: list[cst.CSTNode] = [*chunk.statements, *chunk.header, *chunk.footer]
    while stack:
        node = stack.pop()
        found.add(id(node))
        stack.extend(children(node))
    return found


def _positions(module: cst.Module, chunk: Chunk) -> Any:
    alone = module.with_changes(body=list(chunk.statements), header=list(chunk.header),
                                footer=list(chunk.footer))
    wrapper = MetadataWrapper(alone, unsafe_skip_copy=True)
    try:
        return PositionProvider()._gen(wrapper)  # see Context.positions
    except (AttributeError, TypeError):
        return wrapper.resolve(PositionProvider)
