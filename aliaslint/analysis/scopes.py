"""The state of one path through a scope: names, grad mode, pending saves."""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any

import libcst as cst

from aliaslint.analysis.events import Save
from aliaslint.analysis.records import quick
from aliaslint.analysis.values import (UNKNOWN, ClassInfo, ContainerValue, RefValue, Value, join,
                                      replace)

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
    # The path left the block (`break`, `continue`, a call that raises for certain):
    # nothing after it runs on it.
    dead: bool = False
    # It left by an exception (a call that raises for certain): a `with` block's context
    # manager or a `try`'s handler may go on from here.
    raised: bool = False
    # While a function is summarised: the writes made on this path, kept where paths meet
    # only if made on both, so what is left at the return was made on every path.
    done: frozenset | None = None

    def copy(self) -> Flow:
        return Flow(self.grad, dict(self.saves), self.dirty, dict(self.stale), self.dead,
                    self.raised, self.done)

    def revived(self) -> Flow:
        """This path's facts where an exception it raised is caught."""
        flow = self.copy()
        flow.dead = flow.raised = False
        return flow

    def merge(self, other: Flow) -> None:
        """Join a live path's facts into this live path's."""
        # Each fact held on some path, and a finding needs only one path.
        self.grad = self.grad if self.grad == other.grad else None
        for token, saves in other.saves.items():
            mine = self.saves.get(token, ())
            self.saves[token] = mine + tuple(s for s in saves if s not in mine)
        self.dirty = self.dirty + tuple(d for d in other.dirty if d not in self.dirty)
        for name, write in other.stale.items():
            self.stale.setdefault(name, write)
        for name, write in self.stale.items():
            if write.joint and other.stale.get(name) != write:
                # What one path filled the other may not have: no longer proven.
                self.stale[name] = replace(write, joint=None)
        if self.done is not None and other.done is not None:
            self.done = self.done & other.done

    def rename_saves(self, mapping: dict[int, int]) -> None:
        def renamed(save: Save) -> Save:
            return replace(save, id=mapping[save.id]) if save.id in mapping else save

        for token, pending in self.saves.items():
            self.saves[token] = tuple(dict.fromkeys(renamed(save) for save in pending))
        self.dirty = tuple(dict.fromkeys((write, renamed(save)) for write, save in self.dirty))

    def same(self, other: Flow) -> bool:
        """The same facts, in whatever order the paths that made them ran."""
        return (self.grad == other.grad and self.dead == other.dead
                and self.raised == other.raised
                and self.stale == other.stale and set(self.dirty) == set(other.dirty)
                and self.done == other.done
                and _by_token(self.saves) == _by_token(other.saves))


def _by_token(saves: dict) -> dict:
    return {token: frozenset(pending) for token, pending in saves.items()}


class Env:
    """Name → Value for one scope, with a fallback to enclosing scopes, and the path's facts."""

    __slots__ = ("flow", "names", "parent")

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
            return RefValue(qualname=f"builtins.{name}")
        return UNKNOWN

    def copy(self) -> Env:
        return Env(self.parent, self.names, self.flow.copy())

    def merge(self, other: Env) -> None:
        """Join ``other`` (a sibling path of the same scope) into this env."""
        if other.flow.dead:
            return
        if self.flow.dead:
            self.names = dict(other.names)
            self.flow = other.flow.copy()
            return
        for name in self.names.keys() | other.names.keys():
            a = self.names.get(name)
            b = other.names.get(name)
            if a is b and type(a) is not ContainerValue:
                continue  # the same value on both paths: its join is itself
            if a is not None and b is not None:
                self.names[name] = join(a, b)
            else:
                # Bound on one path only (one branch, a loop's body): the other path
                # cannot read the name at all, so a read after the join sees this value.
                bound = a or b
                self.names[name] = bound if bound is not None else UNKNOWN
        self.flow.merge(other.flow)

    def adopt(self, other: Env) -> None:
        self.names = other.names
        self.flow = other.flow

    def restore(self, state: Env) -> None:
        """Take ``state``'s names and facts, keeping this env's names dict: a branch's
        env that adopted it, or a function defined there, sees what follows."""
        self.names.clear()
        self.names.update(state.names)
        self.flow = state.flow.copy()

    def same(self, other: Env) -> bool:
        return self.names == other.names and self.flow.same(other.flow)

    def rename_saves(self, mapping: dict[int, int]) -> None:
        """Give saves new ids, in the path's facts and in the graphs names hold."""
        for name, value in self.names.items():
            renamed = value.with_saves_renamed(mapping)
            if renamed is not value:
                self.names[name] = renamed
        self.flow.rename_saves(mapping)

    def identical(self, other: Env) -> bool:
        """The same state to everything that reads it: every name bound to a value equal
        to the other's in every field (where it was made included, which equality leaves
        out), in the same order, and the same facts in the same order.  A pass of a loop's
        body from either runs the same way."""
        return self.parent is other.parent and identical(self.flow, other.flow) and \
            identical(list(self.names.items()), list(other.names.items()))

    def covers(self, other: Env) -> bool:
        """Does joining ``other`` into this state add nothing?"""
        joined = self.copy()
        joined.merge(other)
        return joined.same(self)


@dataclass
class Deferred:
    function: cst.FunctionDef
    parent: Env
    cls: ClassInfo | None
    calls: tuple[str, ...] = ()  # the names its body calls


@dataclass
class Summary:
    """What calling a function does, seen from its caller."""

    result: Value
    writes: dict  # argument index -> Write (inside the callee)
    saves: tuple  # (token, Save) pending at return
    returns_arg: int | None  # the result is argument i itself
    # Writes to elements of container arguments: element token -> Write (containers.py).
    element_writes: dict = field(default_factory=dict)
    # The result is a view of argument i (`x[:, 0]`, `h[-1]`, `x.t()`): the caller's
    # tensor's memory.
    view_of: int | None = None
    # The writes made on every path to a return; the others are made on some paths only.
    must: frozenset = frozenset()
    # Writes to memory the caller holds by identity, not as a tensor argument: the
    # parameters of a module it passed (`model.fc.weight.mul_(s)`), an optimizer's step.
    reached: tuple = ()
    # The body runs a backward pass; through the graphs of these tensor arguments.
    backward: bool = False
    consumed: frozenset = frozenset()
    # Writes to tensors of the object's state (`self.<attr>`, its views, `.data`).
    attr_writes: tuple = ()
    # (write, save) pairs dirtied inside the callee, still pending at its return.
    dirty: tuple = ()
    # Storages of the object's state as the callee saw them: the caller sees the same.
    kept: frozenset = frozenset()
    # What its body reported, with whether each is `low` (another file's function only: see
    # `CallProtocol.summary`); reported again where the summary is applied.
    events: tuple = ()



@dataclass
class LoopFrame:
    """The paths that leave one pass over a loop body early."""

    breaks: list[Env] = field(default_factory=list)  # to after the loop, skipping `else`
    continues: list[Env] = field(default_factory=list)  # back to the loop's head
    made: set[int] = field(default_factory=set)  # ids of the saves the pass made


@dataclass
class Converged:
    """A loop's fixed point, kept while the outermost loop around it runs."""

    env: Env  # the env the loop ran in: only the same scope may reuse it
    element: Value | None  # what a `for` target was bound to
    head: Env  # the state at the loop's head
    breaks: Env | None  # the join of the states `break` left with
    exit: Env  # the state after the loop (see loops.py)


def state_token(owner: object, key: str) -> tuple:
    """The storage of the tensor an object keeps as ``key`` (`self.last_attn`) once one of
    its methods has set it: ``owner`` is a token of the object (its instance token, or
    `self`'s inside a method, mapped onto the instance where a call is applied)."""
    return ("state", owner, key)


def is_state(token: object) -> bool:
    return isinstance(token, tuple) and len(token) == 3 and token[0] == "state"


def state_tokens(token: object, mapping: dict[object, frozenset]) -> list[tuple]:
    """A state token of a callee's object as the caller names it: of the instance its
    `self` is (the receiver's tokens), and as it is."""
    assert isinstance(token, tuple) and is_state(token)
    owners = {token[1], *mapping.get(token[1], ())}
    return sorted((state_token(owner, token[2]) for owner in owners), key=repr)


def is_self_token(token: object) -> bool:
    """The token of `self` in a class's methods (ClassInfo.self_token)."""
    return isinstance(token, tuple) and len(token) == 2 and token[0] == "self"


def arg_mark(index: int) -> int:
    """The mark in argument ``index``'s graph while a function is summarised: no save has
    a negative id."""
    return -1 - index


# One argument of a call: its keyword (None: positional), its value, its expression (None
# for one the interpreter passes itself, as a container passes a layer's output on).
Given = tuple[str | None, Value, cst.BaseExpression | None]


@quick
@dataclass(frozen=True)
class Hook:
    """A forward hook or pre-hook registered on a module: a function of this file, or a
    method of a class of this file (a bound method, a callable object's `__call__`)."""

    kind: str  # "pre": runs before forward on its arguments; "forward": after, on its result
    function: cst.FunctionDef
    cls: ClassInfo | None  # the class whose instance is `self` in the hook
    with_kwargs: bool  # called with the keyword arguments as well
    site: cst.Call  # the registration
    # Registered on some paths only, or on a module that is one of several: what it does
    # is a may-effect, its findings `low`.
    may: bool


# The fields of each dataclass the analysis holds, equality's or not.
_FIELDS: dict[type, tuple[str, ...]] = {}


def identical(a: Any, b: Any) -> bool:
    """Equal in every field, those equality leaves out included (where a value was made,
    which view made it), sequences and mappings in the same order; what is not a value
    (a class's facts, a node of the tree) is itself."""
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is tuple or kind is list:
        return len(a) == len(b) and all(identical(x, y) for x, y in zip(a, b))
    if kind is dict:
        return len(a) == len(b) and all(
            identical(x, y) for x, y in zip(a.items(), b.items()))
    names = _FIELDS.get(kind)
    if names is None:
        # The analysis's values, field by field; the rest by their own equality: ints,
        # strings, sets of tokens; a class's facts and the tree's nodes are themselves.
        value = is_dataclass(kind) and kind.__eq__ is not object.__eq__ and \
            not issubclass(kind, cst.CSTNode)
        names = _FIELDS[kind] = tuple(f.name for f in fields(kind)) if value else ()
    if not names:
        return bool(a == b)
    return all(identical(getattr(a, name), getattr(b, name)) for name in names)
