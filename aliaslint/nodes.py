"""A libcst node's children, read from its fields instead of rebuilt.

libcst's ``node.children`` and ``node.visit(visitor)`` rebuild every node they pass through
(``_visit_and_replace_children`` constructs a copy and validates it), which made walking a
tree cost more than parsing it.  Here each node type's child fields are listed once, in the
order its own ``_visit_and_replace_children`` visits them, which is source order; reading
them is then a few attribute lookups per node.  ``tests/test_nodes.py`` holds this equal to
``node.children`` for every node of the fixtures.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Iterator
from typing import Callable, Generic, TypeVar

import libcst as cst

# A field as read: its name, and whether it holds a sequence of nodes (True), one node or
# None or MaybeSentinel (False), or was visited both ways (None: each value is tested).
Field = tuple[str, "bool | None"]
# Fields that hold only layout: whitespace, comments, brackets and separators.
_LAYOUT = frozenset({"lpar", "rpar", "comma", "semicolon", "lbracket", "rbracket", "lbrace",
                     "rbrace", "colon", "equal", "star", "dot", "operator", "header", "footer",
                     "leading_lines", "lines_after_decorators", "newline",
                     "trailing_whitespace"})
_ONE = frozenset({"visit_required", "visit_optional", "visit_sentinel"})
_MANY = frozenset({"visit_sequence", "visit_body_sequence", "visit_iterable",
                   "visit_body_iterable"})


def _child_fields(kind: type) -> tuple[Field, ...]:
    """The fields ``kind``'s `_visit_and_replace_children` visits, in the order it visits them
    (the second argument of each `visit_*(self, "field", ...)` call), and whether it visits
    each as a sequence of nodes (`visit_sequence`: every element is a node) or as one."""
    method = getattr(kind, "_visit_and_replace_children")
    tree = ast.parse(textwrap.dedent(inspect.getsource(method)))
    found: list[tuple[int, int, str, bool]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in _ONE | _MANY and len(node.args) >= 2 and \
                isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
            found.append((node.lineno, node.col_offset, node.args[1].value,
                          node.func.id in _MANY))
    fields: dict[str, bool | None] = {}
    for _, _, name, many in sorted(found):
        fields[name] = many if fields.get(name, many) == many else None
    return tuple(fields.items())


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """``node.children``, without rebuilding ``node``."""
    read = _CHILDREN.get(type(node))
    if read is None:
        read = _CHILDREN[type(node)] = _reader(_child_fields(type(node)))
    return read(node)


def code_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The children that hold code: not whitespace, comments, brackets or separators (an
    operator's token is layout too; its kind is the node's own type)."""
    return (CODE_READERS.get(type(node)) or code_reader(type(node)))(node)


def code_reader(kind: type) -> Reader:
    """The function ``code_children`` reads a ``kind`` node with.  (A walk over many nodes
    calls ``CODE_READERS.get(kind) or code_reader(kind)`` itself: a call fewer per node.)"""
    read = CODE_READERS.get(kind)
    if read is None:
        read = CODE_READERS[kind] = _reader(tuple(
            (name, many) for name, many in _child_fields(kind)
            if "whitespace" not in name and name not in _LAYOUT))
    return read


Reader = Callable[[cst.CSTNode], list[cst.CSTNode]]
_CHILDREN: dict[type, Reader] = {}
CODE_READERS: dict[type, Reader] = {}


def _reader(fields: tuple[Field, ...]) -> Reader:
    """A function reading ``fields`` of a node, in order: a field holding a sequence gives
    its nodes (all of it where it is visited as a sequence), one holding a node gives it,
    None and MaybeSentinel nothing.  Generated per node type, as each field read by its
    own name costs a third of a loop over names with ``getattr``."""
    lines = ["def read(node):", "    found = []"]
    for name, many in fields:
        every = "found.extend(value)" if many else \
            "found.extend([item for item in value if _is_node(type(item))])"
        lines += [f"    value = node.{name}",
                  "    kind = type(value)",
                  f"    if kind is tuple or kind is list: {every}",
                  "    else:",
                  "        known = _NODE_TYPES.get(kind)",
                  "        if known or known is None and _is_node(kind): found.append(value)"]
    lines.append("    return found")
    namespace: dict[str, object] = {"_NODE_TYPES": _NODE_TYPES, "_is_node": _is_node}
    exec("\n".join(lines) + "\n", namespace)
    read: Reader = namespace["read"]  # type: ignore[assignment]
    return read


_NODE_TYPES: dict[type, bool] = {}


def _is_node(kind: type) -> bool:
    """``issubclass(kind, cst.CSTNode)``, remembered: CSTNode is an ABC, whose checks cost
    more than the rest of a walk."""
    known = _NODE_TYPES.get(kind)
    if known is None:
        known = _NODE_TYPES[kind] = issubclass(kind, cst.CSTNode)
    return known


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The node and every node below it, in source order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        below = children(current)
        below.reverse()
        stack.extend(below)


def walk_code(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The node and every node of code below it (``code_children``), in no set order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend((CODE_READERS.get(type(current)) or code_reader(type(current)))(current))


T = TypeVar("T")


class Facts(Generic[T]):
    """Facts computed of nodes, kept from one analysis to the next while they are used.

    The same nodes are analysed again and again: another file's functions by every file
    that imports its module (its tree is kept, see project.KeptTrees), and an open
    document's unchanged statements after each edit (the language server keeps them, see
    incremental.py, and re-checks the documents that import it in between).  A fact is
    kept while one of the last ``AGES`` analyses asked for it.  An entry holds its node,
    so that its id names no other node while it is kept.  Every ``Facts`` counts an
    analysis at ``next_analysis()``."""

    AGES = 8
    _every: list[Facts] = []

    def __init__(self) -> None:
        self._now: dict[int, tuple[cst.CSTNode, T]] = {}
        self._earlier: list[dict[int, tuple[cst.CSTNode, T]]] = []  # the latest first
        Facts._every.append(self)

    def get(self, node: cst.CSTNode) -> T | None:
        entry = self._now.get(id(node))
        if entry is None:
            for earlier in self._earlier:
                entry = earlier.pop(id(node), None)
                if entry is not None:
                    break
            else:
                return None
            self._now[id(node)] = entry
        return entry[1]

    def put(self, node: cst.CSTNode, fact: T) -> T:
        self._now[id(node)] = (node, fact)
        return fact

    @classmethod
    def next_analysis(cls) -> None:
        for facts in cls._every:
            facts._earlier.insert(0, facts._now)
            del facts._earlier[cls.AGES - 1:]
            facts._now = {}
