"""What a file must pass before libcst parses it: CPython's own compiler, and a time budget.

CPython's compiler is the reference for what is Python: a file it rejects is
reported with its message and location (libcst accepts much that CPython does
not, such as ``def f(x, x):`` or ``break`` outside a loop, and words its own
errors as a list of expected tokens).  It is also several times cheaper than
the CST parse, so it screens every file first.

libcst's parser takes time that grows with the square of an expression's depth
(3,000 chained calls take minutes), and nothing can interrupt it once it has
started.  So the depth of every expression is measured on CPython's tree, and
a file whose total would take the parser longer than the budget is reported
instead of parsed.  The analysis then runs on a thread with a large stack and
recursion limit, so that every expression CPython compiles is deep enough to
analyse.
"""

from __future__ import annotations

import _thread
import ast
import gc
import os
import queue
import re
import sys
import threading
import warnings
from dataclasses import dataclass
from typing import Callable, TypeVar

from aliaslint.diagnostics import FILE_NOT_CHECKED, Diagnostic, Position
from aliaslint.lines import rows as text_rows

# The parse work of a module predicts libcst's time and memory from CPython's tree: each
# node costs NODE_WORK units (its share of the CST, tokens and whitespace), and each
# expression node as many more as its depth within its statement (the parser's cost grows
# with the square of an expression's depth).  A unit is about 0.6 µs of libcst's time on
# the slowest shape measured (chained subscripts); a node costs 20 to 80 µs and 3 to 8 KB
# at the check's peak, the most in long literals of calls spanning many lines
# (benchmarks/fuzz.md).  The default budget (the `parse-budget` setting) keeps a file's
# whole check near 12 CPU s and under 1 GB: about 1.5 MB of ordinary code, or 370 KB of
# the densest; one statement CPython compiles costs at most about 3,000,000.
NODE_WORK = 80
PARSE_BUDGET = 10_000_000

# The deepest expression CPython compiles is about 3,000 nodes; the CST and the
# analysis take a few frames per node.
_RECURSION_LIMIT = 30_000
_STACK_BYTES = 512 * 1024 * 1024

Version = tuple[int, int]
RUNNING: Version = (sys.version_info.major, sys.version_info.minor)
_TARGET = re.compile(r"^py3(\d{1,2})$")


def parse_target_version(value: object) -> Version | None:
    """``"py311"`` → (3, 11); None when the value is not such a name (3.7 and later)."""
    match = _TARGET.match(value) if isinstance(value, str) else None
    if match is None or int(match.group(1)) < 7:
        return None
    return 3, int(match.group(1))


@dataclass(frozen=True)
class Work:
    """The parse work a module needs, and where its deepest expression is."""

    units: int = 0  # the depth part: each expression node's depth within its statement
    deepest: int = 0
    row: int = 1
    nodes: int = 0

    @property
    def total(self) -> int:
        return self.units + NODE_WORK * self.nodes

    def __add__(self, other: Work) -> Work:
        deeper = other if other.deepest > self.deepest else self
        return Work(self.units + other.units, deeper.deepest, deeper.row,
                    self.nodes + other.nodes)


# Not the file's name: CPython would read an error's line back from that file (for a
# notebook, its JSON) to turn the column into characters.
_NAME = "<aliaslint>"


@dataclass
class Screened:
    """What the screen learned of a module from one parse by CPython: the finding that stops
    it (a syntax error, or a parse over the budget), else its tree, for the checks after it
    that read CPython's tree (which rules may fire, what it imports) without parsing again."""

    error: Diagnostic | None = None
    tree: ast.Module | None = None  # None where CPython cannot parse it (or `error` is set)
    _work: Work | None = None

    def work(self) -> Work:
        """The parse work of the tree, walked once and only when asked."""
        if self._work is None:
            self._work = parse_work(self.tree) if self.tree is not None else Work()
        return self._work

    def over_budget(self, source: str, filename: str,
                    budget: int = PARSE_BUDGET) -> Diagnostic | None:
        """The AL902 finding for a module whose parse would exceed the time budget."""
        if self.tree is None or _surely_within(source, budget) or \
                _total_work(self.tree, source) <= budget:
            return None
        return over_budget(self.work(), filename, budget)


# Top-level statements whose compile reaches past themselves: a module-level `global` (a
# name used before it) or `nonlocal`; a `from __future__` import (it must come first) is
# tested apart, by its module.
_REACHING = (ast.Global, ast.Nonlocal)
_KNOWN_TEXTS = 4096  # statement texts remembered per buffer at most


def statement_rows(statement: ast.stmt) -> tuple[int, int]:
    """The first and last rows of a statement, its decorators included."""
    first = min([statement.lineno] + [decorator.lineno for decorator in
                                      getattr(statement, "decorator_list", ())])
    return first, statement.end_lineno or statement.lineno


def _compile_statements(tree: ast.Module, source: str, flags: int, known: set[str]) -> None:
    """``compile(tree)``'s verdict, compiling only the top-level statements whose text is
    not in ``known`` (an edit changes one statement; the rest compiled before).  What
    CPython finds past the parser (the symbol table's and code generation's errors) lies
    within one top-level statement unless it is one of ``_REACHING`` or a future import:
    then the whole module is compiled.  Any error is the whole module's own (its message
    and position, as without ``known``)."""
    body = tree.body
    if any(isinstance(statement, _REACHING) or isinstance(statement, ast.ImportFrom) and
           statement.module == "__future__" for statement in body):
        compile(tree, _NAME, "exec", flags, dont_inherit=True)
        return
    rows = text_rows(source)
    fresh: list[tuple[ast.stmt, str]] = []
    for statement in body:
        first, end = statement_rows(statement)
        text = "".join(rows[first - 1:end])
        if text not in known:
            fresh.append((statement, text))
    if not fresh:
        return
    try:
        compile(ast.Module(body=[statement for statement, _ in fresh], type_ignores=[]),
                _NAME, "exec", flags, dont_inherit=True)
    except SyntaxError:
        compile(tree, _NAME, "exec", flags, dont_inherit=True)  # its own error
        return  # (none: nothing is remembered)
    if len(known) + len(fresh) > _KNOWN_TEXTS:
        known.clear()
    known.update(text for _, text in fresh)


def screen(source: str, filename: str, target: Version | None = None, *,
           top_level_await: bool = False, tree: ast.Module | None = None,
           compiles: bool = False, statements: set[str] | None = None) -> Screened:
    """CPython's verdict on source and its tree, from one parse: the AL902 finding for
    source CPython does not compile (nothing is executed), else the tree.

    ``target`` is the grammar to check against (default: the running interpreter's); a
    target newer than the interpreter cannot be checked by its parser, so grammar errors
    are then left to the CST parser.  ``top_level_await`` accepts ``await`` outside a
    function (notebook cells: IPython runs them so).  ``tree``: CPython's tree of ``source``
    made already (by ``ast.parse``, for the running grammar), which is then not made again.
    ``compiles``: this process compiled exactly this source already, for the running
    grammar: only its tree is wanted.  ``statements``: the texts of top-level statements
    that compiled before (an edited buffer's: see ``_compile_statements``); updated.
    """
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT if top_level_await else 0
    target = target or RUNNING
    given = tree if target == RUNNING and not top_level_await else None
    tree = None
    collecting = gc.isenabled()
    try:
        with warnings.catch_warnings():  # invalid escapes and the like are not errors
            warnings.simplefilter("ignore")
            gc.disable()  # a tree is only made, never freed while it is made: a third faster
            try:
                # Only the parser knows older grammars; the tree is the same for any.
                tree = given if given is not None else compile(
                    source, _NAME, "exec", flags | ast.PyCF_ONLY_AST, dont_inherit=True,
                    **({"_feature_version": target[1]} if target < RUNNING else {}))
            except SyntaxError:
                if target > RUNNING:
                    return Screened()  # perhaps newer syntax: the CST parser decides
                raise
            except (RecursionError, MemoryError):
                # Making Python's objects of a deep tree recurses where compiling the
                # source does not: the compiler alone decides, as without a tree.
                if target < RUNNING:
                    raise
                tree = None
            finally:
                if collecting:
                    gc.enable()
            parsed = tree is not None
            # Past the parser, the symbol table and code generation find the rest
            # (duplicate arguments, `break` outside a loop, a late `from __future__`);
            # from the tree they report the same positions as from the source.
            try:
                compiled = compiles and tree is not None and target == RUNNING and \
                    not top_level_await
                if tree is not None and not compiled:
                    try:
                        if statements is not None and target == RUNNING:
                            _compile_statements(tree, source, flags, statements)
                        else:
                            compile(tree, _NAME, "exec", flags, dont_inherit=True)
                        compiled = True
                    except RecursionError:
                        pass  # handing a deep tree back recurses in Python's frames
                if not compiled:
                    compile(source, _NAME, "exec", flags, dont_inherit=True)
            except SyntaxError:
                if target > RUNNING and not parsed:
                    return Screened()  # perhaps newer syntax: the CST parser decides
                raise
    except SyntaxError as error:
        return Screened(_syntax_error(error, filename))
    except (RecursionError, MemoryError) as error:
        return Screened(_error(filename, "Python cannot compile this file either: "
                               f"{error or type(error).__name__} (it nests too deeply)"))
    except (ValueError, OverflowError) as error:
        return Screened(_error(filename, f"Python cannot compile this file: {error}"))
    return Screened(tree=tree)


def compile_error(source: str, filename: str, target: Version | None = None, *,
                  top_level_await: bool = False) -> Diagnostic | None:
    """The AL902 finding for source CPython does not compile (``screen``'s verdict)."""
    return screen(source, filename, target, top_level_await=top_level_await).error


def _surely_within(source: str, budget: int) -> bool:
    # Far too small to reach the budget: each expression node but an empty `arguments`
    # spans at least one character, so n characters hold at most about 2n nodes and
    # n * (n + 1) / 2 units.
    size = len(source)
    return size * (size + 1) // 2 + NODE_WORK * 2 * (size + 1) <= budget


def budget_error(source: str, filename: str, *, top_level_await: bool = False,
                 budget: int = PARSE_BUDGET) -> Diagnostic | None:
    """The AL902 finding for a module whose parse would exceed the time budget."""
    if _surely_within(source, budget):
        return None
    return over_budget(source_work(source, top_level_await=top_level_await), filename,
                       budget)


def source_work(source: str, *, top_level_await: bool = False) -> Work:
    """The parse work of source that compiles (none known for what this Python cannot parse)."""
    tree = python_tree(source, top_level_await=top_level_await)
    return parse_work(tree) if tree is not None else Work()


def python_tree(source: str, filename: str = _NAME, *,
                top_level_await: bool = False) -> ast.Module | None:
    """CPython's tree of ``source`` (``ast.parse``), None where it does not parse; its
    warnings (invalid escapes and the like) are not shown."""
    flags = ast.PyCF_ONLY_AST | (ast.PyCF_ALLOW_TOP_LEVEL_AWAIT if top_level_await else 0)
    collecting = gc.isenabled()
    gc.disable()  # a tree is only made, never freed while it is made: a third faster
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree: ast.Module = compile(source, filename, "exec", flags, dont_inherit=True)
            return tree
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None
    finally:
        if collecting:
            gc.enable()


def _syntax_error(error: SyntaxError, filename: str) -> Diagnostic:
    row = error.lineno or 1
    column = max(error.offset or 1, 1)
    start = Position(row, column)
    end = start
    if error.end_lineno and error.end_offset and error.end_offset > 0:
        end = max(start, Position(error.end_lineno, error.end_offset))
    message = f"{type(error).__name__}: {error.msg}"
    return Diagnostic(FILE_NOT_CHECKED, message, filename, start, end)


def _error(filename: str, message: str, row: int = 1) -> Diagnostic:
    return Diagnostic(FILE_NOT_CHECKED, message, filename, Position(row, 1), Position(row, 1))


def parse_work(tree: ast.AST) -> Work:
    """The sum over expression nodes of their depth within their statement (iteratively:
    the tree may be thousands of nodes deep), and the first of the deepest."""
    node_type, statement, context = ast.AST, ast.stmt, ast.expr_context
    units = deepest = nodes = 0
    row = 1
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    pop, push = stack.pop, stack.append
    while stack:
        node, depth = pop()
        nodes += 1
        if isinstance(node, statement):
            depth = 0
        else:
            depth += 1
            units += depth
            if depth >= deepest:
                line = getattr(node, "lineno", row)
                if depth > deepest or line < row:
                    deepest, row = depth, line
        for name in node._fields:  # ast.iter_child_nodes, without a generator per node
            value = getattr(node, name, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, node_type):
                        push((item, depth))
            elif isinstance(value, node_type) and not isinstance(value, context):
                push((value, depth))
    return Work(units, deepest, row, nodes)


# The work of a top-level statement, by its text and where it lies in it: an edited buffer
# (the language server) and a file both checked and loaded for its importers have most of
# their statements' work known already.  Bounded: cleared when full.
_STATEMENT_WORK: dict[tuple[str, int, int, int], int] = {}
_STATEMENTS_KEPT = 50_000


def _total_work(tree: ast.Module, source: str) -> int:
    """``parse_work(tree).total``, each top-level statement's share looked up by its text.
    (Only the total: where the deepest expression is, said when over the budget, comes
    from the whole walk.)"""
    lines = text_rows(source)  # CPython's rows: str.splitlines breaks at a form feed
    total = 1 + NODE_WORK  # the module node itself: one node, at depth one
    for statement in tree.body:
        first, end = statement_rows(statement)
        # The whole lines it spans, and where in them it starts and ends: its text, so its
        # tree, whatever else shares those lines (`a = 1; b = f(a)`).
        key = ("".join(lines[first - 1:end]), statement.lineno - first,
               statement.col_offset, statement.end_col_offset or 0)
        work = _STATEMENT_WORK.get(key)
        if work is None:
            if len(_STATEMENT_WORK) >= _STATEMENTS_KEPT:
                _STATEMENT_WORK.clear()
            work = _STATEMENT_WORK[key] = parse_work(statement).total
        total += work
    return total


def over_budget(work: Work, filename: str, budget: int = PARSE_BUDGET) -> Diagnostic | None:
    """The AL902 finding for a module whose parse would exceed the time budget, saying which
    part of the work is over it and which setting raises it."""
    if work.total <= budget:
        return None
    head = "too costly to parse within the `parse-budget` per file"
    sized = f"parse work {work.total:,}, budget {budget:,}"
    raise_it = "raise `parse-budget` to check it"
    if work.units > NODE_WORK * work.nodes:
        return _error(
            filename,
            f"{head}: its expressions nest too deeply ({sized}; the work grows with the "
            f"square of an expression's depth, and the deepest, {work.deepest:,} levels, is "
            f"on line {work.row}; {raise_it})",
            work.row,
        )
    return _error(
        filename,
        f"{head}: the file is too large ({sized}: {work.nodes:,} syntax nodes at "
        f"{NODE_WORK} each, {work.units:,} for their depth; {raise_it}, or split the file)",
    )


# A line that is only a backslash: CPython joins it to the next line, libcst's tokenizer
# rejects it (before a dedented `else:`, or last in a file with CRLF line ends).
LONE_BACKSLASH = re.compile(r"^([ \t\f]*)\\(?=\r\n|\r|\n|$)", re.MULTILINE)


def without_lone_backslashes(source: str) -> str:
    """``source`` with each line that is only a backslash made blank: for CPython the
    same module (rows and columns unchanged), which libcst's tokenizer accepts.  (Inside a
    triple-quoted string it changes the string; only the analysis reads it.)"""
    return LONE_BACKSLASH.sub(r"\1 ", source)


T = TypeVar("T")


class _DeepThread:
    """One long-lived thread with a large stack that runs calls handed to it, one at a time.

    Long-lived because a fresh stack this size per file costs about a tenth of the check in
    page faults.  A bare ``_thread`` thread, so a trace function that ``threading.settrace``
    installed (the tracer's, when ``check --trace`` analyses a file from inside it) is never
    called there.  The recursion limit (process-wide) is raised while a call runs.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()  # one call at a time
        self.requests: queue.SimpleQueue = queue.SimpleQueue()
        self.ident: int | None = None
        self.started = False

    def run(self, function: Callable[[], T]) -> T:
        if _thread.get_ident() == self.ident:  # a call from inside a call
            return function()
        with self.lock:
            if not self.started:
                previous = _thread.stack_size(_STACK_BYTES)
                try:
                    _thread.start_new_thread(self._serve, ())
                finally:
                    _thread.stack_size(previous)
                self.started = True
            outcome: list = []
            done = _thread.allocate_lock()
            done.acquire()
            saved = sys.getrecursionlimit()
            sys.setrecursionlimit(max(saved, _RECURSION_LIMIT))
            try:
                self.requests.put((function, outcome, done))
                done.acquire()
            finally:
                sys.setrecursionlimit(saved)
        ok, value = outcome[0]
        if not ok:
            raise value
        return value

    def _serve(self) -> None:
        self.ident = _thread.get_ident()
        _roomy(self._loop)

    def _loop(self) -> None:
        while True:
            function, outcome, done = self.requests.get()
            try:
                outcome.append((True, function()))
            except BaseException as error:  # handed to the caller, raised there
                outcome.append((False, error))
            finally:
                del function
                done.release()


def _roomy(function: Callable[[], T]) -> T:
    """``function()``, called from a frame that leaves room above it for the frames of a
    deep analysis (see ``_ROOM``)."""
    return function()


# CPython (3.11 on) keeps a thread's frames on a stack of chunks, 16 kB at first, and unmaps
# a chunk as soon as the frame that began it returns.  An analysis goes deep and comes back
# all the time, so one whose depth goes back and forth across a chunk's end mapped and
# unmapped 16 kB (and faulted its pages in) at each crossing: 47,000 times over timm, a
# twentieth of a cold check.  A frame that declares ``_ROOM`` slots of value stack takes a
# chunk of its own, its size rounded up to a power of two (1 MiB here), and the frames it
# calls use the half it leaves.  (A value stack larger than the code needs is only unused
# room; before 3.11 the frame is an object of its own, made once per thread.)
_ROOM = 70_000
_roomy.__code__ = _roomy.__code__.replace(co_stacksize=_ROOM)

_deep = _DeepThread()


def _after_fork() -> None:
    global _deep
    _deep = _DeepThread()  # the thread did not survive the fork


os.register_at_fork(after_in_child=_after_fork)


def deeply(function: Callable[[], T]) -> T:
    """``function()`` on a thread with a large stack and a high recursion limit, so that the
    deepest expression CPython compiles can be parsed and analysed; where no such thread can
    be made, here, as it is."""
    try:
        return _deep.run(function)
    except (ValueError, RuntimeError, MemoryError):
        if _deep.started:  # raised by the call itself
            raise
    return function()
