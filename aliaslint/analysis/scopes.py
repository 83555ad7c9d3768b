"""The state of one path through a scope: names, grad mode, pending saves."""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field

import libcst as cst

from aliaslint.analysis.values import UNKNOWN, Kind, Value, join

BUILTINS = frozenset(dir(builtins))


@dataclass
class Flow:
    """Facts that hold on one path; copied at branches, joined where paths meet."""

    grad: bool | None = True  # grad mode: enabled / disabled / not known
    # Saves whose backward has not run yet, by the storage they hold.
    saves: dict = field(default_factory=dict)  # storage token -> tuple[Save, ...]
    # (write, save) pairs: a saved storage written before its backward.
    dirty: tuple = ()
    # Names still bound to a tensor an in-place activation overwrote.
    stale: dict = field(default_factory=dict)  # name -> Write

    def copy(self) -> Flow:
        return Flow(self.grad, dict(self.saves), self.dirty, dict(self.stale))

    def merge(self, other: Flow) -> None:
        # Each fact held on some path, and a finding needs only one path.
        self.grad = self.grad if self.grad == other.grad else None
        for token, saves in other.saves.items():
            mine = self.saves.get(token, ())
            self.saves[token] = mine + tuple(s for s in saves if s not in mine)
        self.dirty = self.dirty + tuple(d for d in other.dirty if d not in self.dirty)
        for name, write in other.stale.items():
            self.stale.setdefault(name, write)


class Env:
    """Name → Value for one scope, with a fallback to enclosing scopes, and the path's facts."""

    __slots__ = ("names", "parent", "flow")

    def __init__(self, parent: Env | None = None, names: dict[str, Value] | None = None,
                 flow: Flow | None = None):
        self.names = dict(names) if names else {}
        self.parent = parent
        self.flow = flow if flow is not None else Flow()

    def lookup(self, name: str) -> Value:
        env: Env | None = self
        while env is not None:
            value = env.names.get(name)
            if value is not None:
                return value
            env = env.parent
        if name in BUILTINS:
            return Value(Kind.REF, qualname=f"builtins.{name}")
        return UNKNOWN

    def copy(self) -> Env:
        return Env(self.parent, self.names, self.flow.copy())

    def merge(self, other: Env) -> None:
        """Join ``other`` (a sibling path of the same scope) into this env."""
        for name in self.names.keys() | other.names.keys():
            a = self.names.get(name)
            b = other.names.get(name)
            if a is None or b is None:
                # Bound on one path only: nothing is proven after the join, but
                # a snapshot taken on that path stays (the other path cannot
                # read the name at all).
                bound = a if a is not None else b
                self.names[name] = bound if bound.snapshot is not None else UNKNOWN
            else:
                self.names[name] = join(a, b)
        self.flow.merge(other.flow)

    def adopt(self, other: Env) -> None:
        self.names = other.names
        self.flow = other.flow


@dataclass(eq=False)
class ClassInfo:
    name: str
    node: cst.ClassDef
    is_module: bool
    methods: dict = field(default_factory=dict)  # name -> FunctionDef
    attrs: dict = field(default_factory=dict)  # self.<attr> after __init__
    params: frozenset = frozenset()  # parameter tokens its __init__ creates
    self_token: object = None
    bases: tuple = ()  # local base classes, in order

    def attr(self, key: str) -> Value | None:
        """`self.<attr>` as __init__ (its own or a local base's) left it."""
        if key in self.attrs:
            return self.attrs[key]
        for base in self.bases:
            value = base.attr(key)
            if value is not None:
                return value
        return None

    def method(self, name: str) -> cst.FunctionDef | None:
        if name in self.methods:
            return self.methods[name]
        for base in self.bases:
            found = base.method(name)
            if found is not None:
                return found
        return None

    def all_params(self) -> frozenset:
        return self.params.union(*(base.all_params() for base in self.bases))


@dataclass
class Deferred:
    function: cst.FunctionDef
    parent: Env
    cls: ClassInfo | None


@dataclass
class Summary:
    """What calling a function does, seen from its caller."""

    result: Value
    writes: dict  # argument index -> Write (inside the callee)
    saves: tuple  # (token, Save) pending at return
    returns_arg: int | None  # the result is argument i itself

