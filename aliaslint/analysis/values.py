"""Abstract values: what a name may hold, and how two paths' values join."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from typing import TYPE_CHECKING

import libcst as cst

from aliaslint import ops

if TYPE_CHECKING:
    from aliaslint.analysis.scopes import ClassInfo


class Kind(Enum):
    TENSOR = "tensor"
    STORAGE = "storage"  # torch.UntypedStorage: one Python object per storage
    TYPED_STORAGE = "typed storage"  # the deprecated torch.TypedStorage: a new object per call
    NDARRAY = "ndarray"  # a NumPy array
    MODULE = "module"  # an nn.Module instance
    PARAMS = "params"  # model.parameters()
    OPTIMIZER = "optimizer"
    GRAD_MODE = "grad mode"  # torch.no_grad() and friends, before `with`
    REF = "ref"  # a reference to an importable name (module, class, function)
    FUNCTION = "function"  # a function defined in the checked file
    CLASS = "class"  # a class defined in the checked file
    OTHER = "other"  # a known non-tensor Python value (number, str, bool, None, …)
    UNKNOWN = "unknown"


@dataclass(eq=False)
class ModuleInfo:
    """What calling a module does: a known torch.nn class, a container, or a local class."""

    spec: ops.ModuleOp | None = None
    inplace: bool = False
    children: tuple[Value, ...] | None = None  # containers, in call order
    cls: ClassInfo | None = None  # a module class defined in the checked file
    params: frozenset = frozenset()  # storage tokens of every parameter it holds
    label: str = "module"  # how messages name it: "nn.ReLU(inplace=True)", "D"


@dataclass(frozen=True)
class Value:
    kind: Kind
    # For REF: the dotted name ("torch.nn.functional.relu").
    qualname: str | None = None
    # For values computed from another one: (how, what), e.g. ("id", <tensor>),
    # ("data_ptr", <tensor>).  Lets a rule see what a number stands for.
    derived: tuple[str, Value] | None = None
    # Where the value was made, for related spans.
    origin: cst.CSTNode | None = field(default=None, compare=False)
    # -- tensors --
    storage: object = None  # token: equal tokens are one storage; None: not known
    counter: object = None  # version-counter token (`.data` has its own)
    requires_grad: bool | None = None
    leaf: bool = False
    # How it reaches its storage: None (owns it), "view", "detach", "data".
    via: str | None = None
    # Ids of the saves made by the graph that produced it: a backward pass
    # through this value reads them.
    graph: frozenset = frozenset()
    module: ModuleInfo | None = field(default=None, compare=False)
    params: frozenset = frozenset()  # PARAMS / OPTIMIZER: parameter storage tokens
    # A tuple or list whose every element is this value (`q, k, v = x.chunk(3)`).
    each: Value | None = None
    # A tuple or list display's elements, in order (`x, y` in `a, b = x, y`).
    items: tuple | None = field(default=None, compare=False)
    # A container built by repeating one object (`[t] * n`): where.
    replicated: cst.CSTNode | None = field(default=None, compare=False)
    # An element taken from such a container: the container's construction.
    replica: cst.CSTNode | None = field(default=None, compare=False)
    # Memory layout: contiguous yes / no / not known, and the op that made it
    # non-contiguous; `expanded`: several elements share one memory location.
    contiguous: bool | None = None
    layout_origin: cst.CSTNode | None = field(default=None, compare=False)
    # The op that made it non-contiguous and its literal dims: ("transpose", (1, 2)).
    layout_op: tuple | None = None
    expanded: bool = False
    # A view: where it was made.  A result that aliases its source only for
    # some inputs (reshape, contiguous, float, to…): the source's storage.
    view_origin: cst.CSTNode | None = field(default=None, compare=False)
    maybe_of: object = None
    # A fresh copy of another tensor (advanced indexing, index_select…): where.
    copied_at: cst.CSTNode | None = field(default=None, compare=False)
    # A reference kept as if it were a copy (`best = model.state_dict()`,
    # `prev = w`): the expression that made it.
    snapshot: cst.CSTNode | None = field(default=None, compare=False)
    # The part of its base a slice view covers along dim 0 (see slice_region).
    region: tuple | None = None

    @property
    def is_tensor_like(self) -> bool:
        return self.kind in (Kind.TENSOR, Kind.STORAGE, Kind.TYPED_STORAGE)

    def with_saves_renamed(self, mapping: dict[int, int]) -> Value:
        """This value with save ids renamed in its graph and its elements' graphs."""
        changes: dict = {}
        if self.graph and not mapping.keys().isdisjoint(self.graph):
            changes["graph"] = frozenset(mapping.get(i, i) for i in self.graph)
        if self.each is not None:
            each = self.each.with_saves_renamed(mapping)
            if each is not self.each:
                changes["each"] = each
        if self.items is not None:
            items = tuple(item.with_saves_renamed(mapping) for item in self.items)
            if any(new is not old for new, old in zip(items, self.items)):
                changes["items"] = items
        return replace(self, **changes) if changes else self


UNKNOWN = Value(Kind.UNKNOWN)
OTHER = Value(Kind.OTHER)


def join(a: Value, b: Value) -> Value:
    """The value a name holds after two paths meet: only what both agree on."""
    if a == b:
        if a.module is not b.module:
            return replace(a, module=None) if a.kind is not Kind.MODULE else UNKNOWN
        return a
    if a.snapshot is not None or b.snapshot is not None:
        # A snapshot taken on one path is a hazard on that path: keep it.
        kept = a if a.snapshot is not None else b
        other = b if kept is a else a
        if other.kind in (Kind.OTHER, Kind.UNKNOWN) or other == kept:
            return kept
    if a.kind is not b.kind or a.kind in (Kind.REF, Kind.FUNCTION, Kind.CLASS, Kind.MODULE):
        return UNKNOWN
    if a.kind is Kind.TENSOR:
        same_storage = a.storage == b.storage
        return Value(
            Kind.TENSOR,
            origin=a.origin,
            storage=a.storage if same_storage else None,
            counter=a.counter if same_storage and a.counter == b.counter else None,
            requires_grad=a.requires_grad if a.requires_grad == b.requires_grad else None,
            leaf=a.leaf and b.leaf,
            via=a.via if a.via == b.via else None,
            graph=a.graph | b.graph,
        )
    return Value(a.kind, origin=a.origin)


def refers_to(value: Value, tokens: set) -> bool:
    """Does ``value`` reach any of these storages (itself, or holding them)?"""
    if value.storage in tokens or value.maybe_of in tokens:
        return True
    if value.params and not value.params.isdisjoint(tokens):
        return True
    module = value.module
    return module is not None and bool(module.params) and not module.params.isdisjoint(tokens)

