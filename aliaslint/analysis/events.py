"""Facts about saves and writes, and the events rules consume."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from aliaslint.analysis.records import quick
from aliaslint.analysis.values import ArrayValue, TensorValue, Value


@quick
@dataclass(frozen=True)
class Save:
    """Autograd saved a tensor at ``node`` for the backward pass of its graph."""

    id: int
    storage: object
    counter: object
    node: cst.CSTNode
    # What saved it, when the call's source does not say: "`nn.Sigmoid()`"
    # for a module run inside `self.net(x)`; None: the call at ``node`` itself.
    label: str | None
    what: str  # "its result", "its input", "its parameters"
    what_node: cst.CSTNode | None = None  # the input's expression, for messages
    # Made only if the op's one differentiable input requires grad, which is not known
    # yet: a backward pass reached from a value that follows from it proves it (see
    # TensorValue.pending).
    conditional: bool = False
    # Made by a module the file did not build (ModuleInfo.assumed).
    assumed: bool = False
    # The in-place activation's own save of its result, which its backward cannot use: the
    # negative slope (its argument here) flipped the sign it reads (ops.Op.negative_slope).
    slope: cst.CSTNode | None = None


class SaveIds:
    """Save ids: one per save site, and one per site and age.

    A loop's body makes the same saves on every pass, so a site's save has
    one id and the loop's state can stop changing.  But the save a site made
    in an earlier iteration is another tensor than the one it makes now: a
    backward through this iteration's graph does not read the earlier one, and
    a write that dirtied only the earlier one is no hazard for it.  So when a
    pass hands its state back to the loop's head, the saves the body made
    become "older than this iteration of the loop at nesting level L" (the
    recency abstraction): one more id per site and level, so finitely many.
    """

    def __init__(self) -> None:
        self._next = itertools.count(1)
        self._sites: dict[tuple, int] = {}  # site -> the id of its recent save
        self._aged: dict[int, dict[int, int]] = {}  # recent id -> {level: id}

    def recent(self, site: tuple) -> int:
        found = self._sites.get(site)
        if found is None:
            found = self._sites[site] = next(self._next)
        return found

    def aging(self, recent: set[int], level: int) -> dict[int, int]:
        """The ids of saves made at these sites in the current iteration of the
        loop at ``level`` (or of a loop inside it) → their ids once older."""
        mapping = {}
        for site in recent:
            by_level = self._aged.setdefault(site, {})
            older = by_level.get(level)
            if older is None:
                older = by_level[level] = next(self._next)
            mapping[site] = older
            for deeper, younger in by_level.items():
                if deeper > level:
                    mapping[younger] = older
        return mapping


# An in-place op's other tensor inputs: (value, its expression or its role).
WriteInputs = tuple[tuple[TensorValue | ArrayValue, cst.CSTNode | str | None], ...]


@quick
@dataclass(frozen=True, kw_only=True)
class Write:
    """An in-place write to a storage."""

    node: cst.CSTNode
    stmt: cst.CSTNode
    target: TensorValue | ArrayValue | None  # None for optimizer.step() (many parameters)
    target_node: cst.CSTNode | None = None
    # What writes, when the source at ``node`` does not say it: the module
    # "`nn.ReLU(inplace=True)`" run by `self.relu(x)`; None: ``node`` itself.
    label: str | None = None
    via: str | None = None  # the target's `via`: None, "view", "detach" or "data"
    activation: bool = False  # an in-place activation (`inplace=True`, `relu_`)
    grad_enabled: bool | None
    # Where the write was configured, e.g. the nn.ReLU(inplace=True) constructor.
    defined_at: cst.CSTNode | None = None
    # The op overwrites the destination whatever it held (copy_, fill_, zero_,
    # item assignment, out=): code that fills a buffer through a view.
    fill: bool = False
    # A function of this file wrote its argument: its name, and whether it
    # says so (a trailing `_`, "in place" in its docstring).
    callee: str | None = None
    declared: bool = False
    # The parameters an optimizer step (target None) writes, by token.
    params: frozenset = frozenset()
    inputs: WriteInputs = ()  # to find overlaps
    # The written part of the target along dim 0, when literal slices say it;
    # () for an item assignment whose part is not known; None: all of it.
    region: tuple | None = None
    # The written part of the target in every dim (see index_regions): () for all of it,
    # None when not known.
    index: tuple | None = ()
    # The elements of the target's root it writes (see geometry.covers_disjoint); None: not
    # known.
    cover: tuple | None = None
    # The exact covers (see geometry.covers_tile) of this write and of the writes before it
    # on this path to the same root, a tensor this code made that nothing else holds (no
    # attribute, no container): what of it the code has filled through its parts.  None:
    # not such a write.
    joint: frozenset | None = None
    # A may-effect, so what follows from it is `low`: made by a called function on some of
    # its paths only, or by one of several definitions a call may run (an override chosen
    # at run time).
    may: bool = False
    # Made inside a function run by `checkpoint(..., use_reentrant=False)`: that call.
    checkpoint: cst.CSTNode | None = field(default=None, compare=False)
    # The target is an element of a container picked by an index the code does not pin
    # down (TensorValue.guessed).
    guessed: bool = field(default=False, compare=False)
    # A may-effect: made by a hook perhaps registered on the module called (see
    # protocol.Hook), so what follows from it is `low`.
    assumed: bool = False


@quick
@dataclass(frozen=True)
class Event:
    node: cst.CSTNode
    # The enclosing simple statement or compound statement header: a
    # suppression comment on its first line covers the finding.
    stmt: cst.CSTNode

    def __hash__(self) -> int:
        # By the node alone (equal events have the same node): the analysis puts every
        # event it reports in a set, and a hash of every field would hash each value it
        # holds, field by field.  The events of one node are few.
        return hash((type(self), id(self.node)))

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.__hash__ = Event.__hash__  # type: ignore[method-assign]  # kept by @dataclass


@quick
@dataclass(frozen=True)
class Compare(Event):
    operator: str  # "==", "!=", "is", "is not", "<", …
    left: Value
    right: Value
    left_node: cst.BaseExpression
    right_node: cst.BaseExpression


@quick
@dataclass(frozen=True)
class Call(Event):
    qualname: str | None  # resolved callee: "torch.zeros", "torch.Tensor.storage", …
    receiver: Value | None  # the object a method was called on
    receiver_node: cst.BaseExpression | None
    result: Value


@quick
@dataclass(frozen=True)
class Reference(Event):
    qualname: str  # an importable name used in the code: "torch.FloatStorage"


@quick
@dataclass(frozen=True)
class InplaceWrite(Event):
    write: Write


@quick
@dataclass(frozen=True)
class SavedWrite(Event):
    """A storage saved for backward was written in place, and a backward pass
    (or the caller, through a returned tensor) will read the saved value."""

    write: Write
    save: Save
    consumer: cst.CSTNode
    consumer_label: str | None  # None: the call at ``consumer``; or "the tensor returned here"
    returned: bool


@quick
@dataclass(frozen=True)
class StaleRead(Event):
    """A name that shares memory with a storage written in place under another
    name, read after the write: it sees the new values."""

    write: Write
    name: str
    read: cst.CSTNode
    value: Value  # what the name holds
    # The read is itself an in-place write of that name (`out.clamp_()`,
    # `out += 1`, `out[i] = v`): the code treats it as a buffer it updates.
    rewritten: bool = False
    # The statement the read is in.
    read_stmt: cst.CSTNode | None = field(default=None, compare=False)


@quick
@dataclass(frozen=True)
class DataOnTemporary(Event):
    """`x[1:3].data = v`, `w.t().data = v`: `.data` set on a tensor object the expression just
    made.  ``node`` is the `.data` target; ``base`` the expression the object came from."""

    base: cst.BaseExpression


@quick
@dataclass(frozen=True)
class PackHookWrite(Event):
    """A saved-tensor pack hook of this file writes its argument in place, and a forward op
    inside the `with saved_tensors_hooks(...)` block saves a tensor: that op raises.
    ``node`` and ``stmt`` are the write inside the hook."""

    hooks: cst.CSTNode  # the `saved_tensors_hooks(...)` call
    saved: cst.CSTNode  # the first op in the block that saves a tensor


@quick
@dataclass(frozen=True)
class NonContiguousView(Event):
    """`.view()` of a tensor whose layout is known to be non-contiguous."""

    receiver: TensorValue
    receiver_node: cst.BaseExpression | None


@quick
@dataclass(frozen=True)
class LostWrite(Event):
    """An in-place write into a temporary copy whose result nobody keeps."""

    write: Write
    # The copy was made by one index proven one-dimensional (a tensor of one dim, a flat
    # list of ints) over the source's first dim: its dims are the source's, dim 0 picked.
    leading_index: bool = False

