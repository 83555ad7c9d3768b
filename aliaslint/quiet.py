"""Files no rule can fire in, proven on CPython's tree before libcst parses them.

Every event the rules without words read (AL101–AL208, AL301) comes from a write to memory
(an in-place op, an item or augmented assignment, `out=`, an in-place module or activation,
a backward pass that accumulates `.grad`, an optimizer's step, `load_state_dict`) or from a
`view` call.  Each of these is spelled in the code that makes it: in the checked file, or in
a function or class of another checked file whose summary the analysis applies at a call
(aliaslint/project.py).  So a file is quiet when its tree spells none of them and neither do
the checked files it can reach through its imports; its own check would find nothing, and it
is not parsed.

What spells a write is read from the op tables (``writing_names``): a name of an op or module
that writes, a keyword that makes a call write, wherever it appears (a name, an attribute, a
keyword, an imported name, a string that `getattr` may look up).  A name that merely could be
such a call is enough: the proof is cheap and errs only towards parsing.
"""

from __future__ import annotations

import ast
import os
from bisect import bisect_left
from functools import cache
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

if TYPE_CHECKING:
    from aliaslint.outline import Outline

# The events of the rules without words: each one needs a write or a `view` call.
WRITING_EVENTS = frozenset({"InplaceWrite", "SavedWrite", "StaleRead", "LostWrite",
                            "PackHookWrite", "NonContiguousView"})

# Written by the analysis itself rather than the tables: the keywords that make a call write
# (`out=`, `inplace=`), the view whose layout it checks, and the calls that write parameters
# or their gradients.
_NAMED = frozenset({"out", "inplace", "view", "step", "zero_grad", "backward", "grad",
                    "load_state_dict", "manual_backward"})
# The other checked files a file's quietness may be proven over.
_REACH = 200

# Parsing every file is the reference the skip is measured against (tests, benchmarks).
DISABLE = "ALIASLINT_PARSE_QUIET"


def enabled() -> bool:
    return os.environ.get(DISABLE, "") in ("", "0")


@cache
def writing_names() -> frozenset[str]:
    """Every name that may spell a write or a checked `view` (see the module's docstring)."""
    import json

    from aliaslint import ops

    raw = ops._load()
    names = set(_NAMED) | ops.ndarray_writers()
    for name, line in raw["ops"].items():
        if '"kind":"inplace"' in line or '"kind":"backward"' in line or \
                '"kind":"optimizer_step"' in line or '"inplace_kwarg"' in line:
            names.add(name.rpartition(".")[2])
    for name, line in raw["modules"].items():
        entry = json.loads(line)
        if entry.get("inplace_kwarg") or entry.get("writes"):
            names.add(name.rpartition(".")[2])
    return frozenset(names)


def walk(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node of the tree, in no set order: ``ast.walk``, in half its time (a generator
    per node's fields there)."""
    node_type = ast.AST
    stack: list[Any] = [tree]
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        node = pop()
        if not isinstance(node, node_type):
            continue  # a list's string (`global` names) or None (`**` in a dict display)
        yield node
        for name in node._fields:
            value = getattr(node, name, None)
            if type(value) is list:
                extend(value)
            elif isinstance(value, node_type):
                push(value)


def writes_nothing(tree: ast.AST) -> bool:
    """Does the tree spell no write and no `view` call?"""
    names = writing_names()
    load = ast.Load
    node: Any  # each kind read for its own fields (a type test per node, no isinstance)
    for node in walk(tree):
        kind = type(node)
        if kind is ast.Name:
            if node.id in names:
                return False
        elif kind is ast.Attribute:
            if node.attr in names:
                return False
        elif kind is ast.Subscript:
            if type(node.ctx) is not load:
                return False  # `x[i] = v`, `del x[i]`
        elif kind is ast.AugAssign:
            return False
        elif kind is ast.keyword:
            if node.arg in names:
                return False
        elif kind is ast.Constant:
            if type(node.value) is str and node.value in names:
                return False
        elif kind is ast.alias:
            if node.name.rpartition(".")[2] in names or node.asname in names:
                return False
        elif kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            if node.name in names:
                return False
    return True


# An import: (level, module, the names it binds from it); ``import a.b`` is
# (0, None, ("a.b",)).
Imported = tuple[int, "str | None", tuple[str, ...]]


def imported(tree: ast.Module) -> list[Imported]:
    """Each import of the module, anywhere in it."""
    found: list[Imported] = []
    for node in walk(tree):
        if type(node) is ast.Import:
            found.append((0, None, tuple(alias.name for alias in node.names)))
        elif type(node) is ast.ImportFrom:
            found.append((node.level, node.module, tuple(alias.name for alias in node.names)))
    return found


def reached(imports: Iterable[Imported], path: str, program, root: str) -> set[str]:
    """The checked files a name imported by ``path`` (``imports``: its imports) may resolve
    into (``Program.module_of`` of any dotted name that starts with what the import binds),
    among the checked files under ``root``, one of the roots its imports search."""
    prefixes: set[str] = set()
    for level, module, names in imports:
        if level == 0 and module is None:
            for name in names:
                prefixes.add(name.split(".")[0])  # `import a.b` binds `a`
            continue
        base = program.absolute(path, level, module) if level else module
        if base is None:
            continue  # beyond the top-level package: Python raises, nothing is linked
        prefixes.add(base)
        for name in names:
            prefixes.add(base if name == "*" else f"{base}.{name}")
    modules: dict[str, str] = program.roots.get(root, {})
    ordered: list[str] = program.ordered.get(root, [])
    found: set[str] = set()
    for prefix in prefixes:
        # A name below the prefix may be a module, or an attribute of the longest module
        # above it (what `Program.module_of` resolves it to).
        exact = modules.get(prefix)
        if exact is not None:
            found.add(exact)
        below = prefix + "."
        for index in range(bisect_left(ordered, below), len(ordered)):
            name = ordered[index]
            if not name.startswith(below):
                break  # the names below the prefix are together in sorted order
            found.add(modules[name])
        parts = prefix.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            above = modules.get(".".join(parts[:cut]))
            if above is not None:
                found.add(above)
                break
    found.discard(path)
    return found


def quiet(own: Outline, path: str | None, program,
          outline: Callable[[str], Outline | None]) -> bool:
    """Is the file at ``path`` (of ``program``, or alone), whose tree tells ``own``, quiet:
    neither it nor a checked file it reaches through imports spells a write?
    ``outline(path)`` is what another checked file's tree tells (None where it does not
    parse: then nothing is proven)."""
    if not own.writes_nothing:
        return False
    if program is None or path is None or path not in program.searched:
        return True
    seen = {path}
    todo: list[tuple[str, Sequence[Imported]]] = [(path, own.imports)]
    while todo:
        importer, imports = todo.pop()
        others: set[str] = set()
        for root in program.searched.get(importer, ()):
            others |= reached(imports, importer, program, root)
        for other in sorted(others):
            if other in seen:
                continue
            seen.add(other)
            if len(seen) > _REACH:
                return False
            found = outline(other)
            if found is None or not found.writes_nothing:
                return False
            todo.append((other, found.imports))
    return True
