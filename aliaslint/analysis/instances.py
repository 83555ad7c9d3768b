"""Which storages a class's attributes name, and whether one object holds them.

A tensor an `__init__` allocates (`self.k = torch.zeros(n, d)`) has one storage token per
allocation site, shared by every instance of the class.  A called method's effect on such a
tensor (a cache it returns, a buffer it writes, a save of it left pending) can be applied at
its call only where that token stands for one object: the class is built at one place, which
runs once (module-level code outside any loop, or the `__init__` of a class that is itself
built once).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import libcst as cst

from aliaslint.nodes import CODE_READERS, Facts, code_reader

_REPEATING = frozenset({cst.For, cst.While, cst.ListComp, cst.SetComp, cst.DictComp,
                        cst.GeneratorExp, cst.Lambda})
# Where a call may run more than once, for ``calls``: a loop or a comprehension.
_LOOPS = _REPEATING - {cst.Lambda}


class _Site(NamedTuple):
    """A call of a name, and what is around it."""

    call: cst.Call
    owner: cst.ClassDef | None  # the innermost class around it
    functions: tuple[cst.FunctionDef, ...]  # the functions around it, outermost first
    repeated: bool  # inside a loop, a comprehension or a lambda


class _Part:
    """What one top-level statement holds of ``Instances``: one walk of it (type tests by
    identity: libcst's node classes are ABCs, whose isinstance costs more than the rest of
    the walk)."""

    def __init__(self, statement: cst.CSTNode) -> None:
        self.owner: dict[int, cst.ClassDef] = {}  # id(call) -> the class whose body has it
        self.sites: dict[str, list[_Site]] = {}
        self.classes: dict[str, list[cst.ClassDef]] = {}
        self.in_function: set[int] = set()  # calls in functions outside any class
        self.subclassed: set[str] = set()  # names some class derives from
        self.mentions: dict[str, int] = {}  # how often each name is read
        self.copies = False  # it copies objects (`copy.deepcopy(model)`)
        # Calls of each name (`f(...)`, `x.f(...)`): two for one inside a loop or a
        # comprehension.
        self.calls: dict[str, int] = {}
        mentions, readers = self.mentions, CODE_READERS
        # (the children of a node, the innermost class above them, the functions above them,
        # inside a loop or a comprehension, inside one or a lambda): one entry per node
        # whose children wait, not one per child.
        work: list[tuple[Sequence[cst.CSTNode], cst.ClassDef | None,
                         tuple[cst.FunctionDef, ...], bool, bool]] = \
            [((statement,), None, (), False, False)]
        node: Any  # each kind read for its own fields (a type test per node, no isinstance)
        while work:
            batch, owner, functions, looped, repeated = work.pop()
            for node in batch:
                kind = type(node)
                inner_owner, inner_functions = owner, functions
                if kind is cst.Name:
                    mentions[node.value] = mentions.get(node.value, 0) + 1
                    self.copies = self.copies or node.value == "deepcopy"
                elif kind is cst.Attribute:
                    self.copies = self.copies or node.attr.value in ("deepcopy", "copy")
                elif kind is cst.Call:  # an allocation's token is its call's
                    if owner is not None and len(functions) == 1 and \
                            functions[0].name.value == "__init__":
                        self.owner[id(node)] = owner  # an attribute the constructor allocates
                    elif functions or owner is not None:
                        self.in_function.add(id(node))
                    self._call(_Site(node, owner, functions, repeated), looped)
                elif kind is cst.ClassDef:
                    self._class(node)
                    inner_owner = node
                elif kind is cst.FunctionDef:
                    inner_functions = (*functions, node)
                children = (readers.get(kind) or code_reader(kind))(node)
                if children:
                    work.append((children, inner_owner, inner_functions,
                                 looped or kind in _LOOPS, repeated or kind in _REPEATING))

    def _call(self, site: _Site, looped: bool) -> None:
        func = site.call.func
        name = func.value if type(func) is cst.Name else func.attr.value \
            if type(func) is cst.Attribute else None
        if name is not None:
            self.sites.setdefault(name, []).append(site)
            self.calls[name] = self.calls.get(name, 0) + (2 if looped else 1)

    def _class(self, node: cst.ClassDef) -> None:
        self.classes.setdefault(node.name.value, []).append(node)
        for base in node.bases:
            value = base.value
            name = value.value if type(value) is cst.Name else value.attr.value \
                if type(value) is cst.Attribute else None
            if name is not None:
                self.subclassed.add(name)


# Kept while the statements are (an open document's unchanged statements are the same
# nodes after an edit: only the edited ones are walked again).
_PARTS: Facts[_Part] = Facts()


class Instances:
    """Per module: where each class is built, which class's code holds each node, and how
    often each name is called; gathered from its top-level statements' parts."""

    def __init__(self, module: cst.Module) -> None:
        self._owner: dict[int, cst.ClassDef] = {}
        self._sites: dict[str, list[_Site]] = {}
        self._classes: dict[str, list[cst.ClassDef]] = {}
        self._in_function: set[int] = set()
        self._subclassed: set[str] = set()
        self._mentions: dict[str, int] = {}
        self._copies = False
        self._once: dict[str, bool] = {}
        self.calls: dict[str, int] = {}
        for statement in module.body:
            part = _PARTS.get(statement) or _PARTS.put(statement, _Part(statement))
            self._owner.update(part.owner)
            for name, sites in part.sites.items():
                self._sites.setdefault(name, []).extend(sites)
            for name, classes in part.classes.items():
                self._classes.setdefault(name, []).extend(classes)
            self._in_function |= part.in_function
            self._subclassed |= part.subclassed
            for name, count in part.mentions.items():
                self._mentions[name] = self._mentions.get(name, 0) + count
            self._copies = self._copies or part.copies
            for name, count in part.calls.items():
                self.calls[name] = self.calls.get(name, 0) + count

    def single(self, token: object) -> bool:
        """Is ``token`` an allocation made outside any class, or in the code of a class
        whose instances are one object?"""
        if not (isinstance(token, tuple) and len(token) >= 2 and token[0] == "alloc"
                and isinstance(token[1], int)):
            return False
        owner = self._owner.get(token[1])
        if owner is None:
            # Module-level code runs once; a function's or a method's allocation is a new
            # tensor each time it runs.
            return token[1] not in self._in_function
        return self._built_once(owner.name.value, 0)

    def _built_once(self, name: str, depth: int) -> bool:
        if name in self._once:
            return self._once[name]
        self._once[name] = False  # a class that builds itself is not built once
        sites = self._sites.get(name, [])
        once = depth < 8 and len(self._classes.get(name, [])) == 1 and len(sites) == 1 \
            and name not in self._subclassed and not self._copies \
            and self._mentions.get(name, 0) == 2  # its definition and the one call
        if once:
            site = sites[0]
            once = not site.repeated
            functions = site.functions
            if once and functions:
                # Built in a method: only an `__init__` of a class itself built once.
                owner = site.owner
                once = len(functions) == 1 and functions[0].name.value == "__init__" and \
                    owner is not None and self._built_once(owner.name.value, depth + 1)
        self._once[name] = once
        return once
