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
from typing import Generic, TypeVar

import libcst as cst

# A field as read: its name, and whether it holds a sequence of nodes (True), one node or
# None or MaybeSentinel (False), or was visited both ways (None: each value is tested).
Field = tuple[str, "bool | None"]
_FIELDS: dict[type, tuple[Field, ...]] = {}
_CODE_FIELDS: dict[type, tuple[Field, ...]] = {}
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
    kind = type(node)
    fields = _FIELDS.get(kind)
    if fields is None:
        fields = _FIELDS[kind] = _child_fields(kind)
    return _read(node, fields)


def code_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The children that hold code: not whitespace, comments, brackets or separators (an
    operator's token is layout too; its kind is the node's own type)."""
    kind = type(node)
    fields = _CODE_FIELDS.get(kind)
    if fields is None:
        fields = _CODE_FIELDS[kind] = tuple(
            (name, many) for name, many in _child_fields(kind)
            if "whitespace" not in name and name not in _LAYOUT)
    return _read(node, fields)


def _read(node: cst.CSTNode, fields: tuple[Field, ...]) -> list[cst.CSTNode]:
    found: list[cst.CSTNode] = []
    for name, many in fields:
        value = getattr(node, name)
        kind = type(value)
        if kind is tuple or kind is list:
            if many:
                found.extend(value)  # a sequence visited as such: nodes only
            else:
                found.extend(item for item in value if _is_node(type(item)))
        elif _is_node(kind):  # not None, not MaybeSentinel
            found.append(value)
    return found


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
        stack.extend(code_children(current))


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
