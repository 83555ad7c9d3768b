"""Abstract values: what a name may hold, one class per kind, and how two paths' values join."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, TypeVar

import libcst as cst

from aliaslint import ops
from aliaslint.analysis.records import quick

if TYPE_CHECKING:
    from dataclasses import replace  # mypy checks the changes against the fields

    from aliaslint.analysis.shapes import Layout
else:
    def replace(obj: Any, /, **changes: Any) -> Any:
        """``dataclasses.replace`` for the analysis's dataclasses, at an eighth of its cost
        (a value is copied with a change at nearly every op).  None of them has a
        ``__post_init__``, slots, or an init-only field that ever holds anything but its
        default, so copying the fields and applying the changes makes the object
        ``dataclasses.replace`` would (tests/test_analysis_types.py holds both equal)."""
        new = object.__new__(type(obj))
        fields = new.__dict__
        fields.update(obj.__dict__)
        fields.update(changes)
        return new




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
    children: tuple[ModuleValue, ...] | None = None  # containers, in call order
    cls: ClassInfo | None = None  # a module class defined in the checked file
    params: frozenset = frozenset()  # storage tokens of every parameter it holds
    label: str = "module"  # how messages name it: "nn.ReLU(inplace=True)", "D"
    # Its parameters by attribute name (`weight`, `bias`): the ones the op it runs takes.
    named: dict = field(default_factory=dict)
    # Its parameters do not require grad (`requires_grad_(False)`, `from_pretrained`).
    frozen: bool = False
    # Handed to a function the file does not define (which may freeze or replace its
    # parameters, as `weight_norm` or `prune` do): nothing about them is known any more.
    escaped: bool = False
    # A ModuleList built from one module expression (`[Block() for _ in range(n)]`):
    # what each element is.
    element: ModuleValue | None = None
    # Not built here: a value whose `.parameters()` the file hands to an optimizer.  That
    # it is a module with trainable parameters, and saves some of them when called, is
    # plausible but not proven: what follows from it is a low-confidence finding.
    assumed: bool = False
    # An instance of exactly this class (built by the code), not `self` in a method body,
    # which may be an instance of a subclass (see dispatch.py).
    exact: bool = True
    # Forward hooks and pre-hooks registered on it (see protocol.Hook), in the order
    # torch runs each kind.
    hooks: list = field(default_factory=list)
    # One of several modules (an element of `model.modules()`), each of these; the
    # indices of those it may not be (an `isinstance` test not decided for them).
    members: tuple[ModuleValue, ...] | None = None
    uncertain: frozenset[int] = frozenset()
    # The members are the layers of a container whose layers are known, in the order
    # `children()` yields them: a loop over them runs layer by layer (loops.py).
    ordered: bool = False
    # A `ModuleDict` built from a dict whose keys are literals: the key of each child.
    keys: tuple | None = None
    # The names its children are registered under, in order, where the code gave them all
    # (`add_module(str(i), m)` on an empty `nn.Sequential()`); None when not known.
    names: tuple[str, ...] | None = None


@quick
@dataclass(frozen=True)
class Value:
    """What an expression evaluates to.  This class holds what every kind has;
    the subclasses below hold the facts of one kind.  Plain instances are the
    kinds with nothing more to say: other, unknown, the storages.

    Every value answers the questions rules ask about tensors (``storage``,
    ``via``, ``snapshot``, …): a value that is not a tensor knows none of it.
    """

    kind: Kind
    # For REF: the dotted name ("torch.nn.functional.relu"); FUNCTION, CLASS: its name.
    qualname: str | None = None
    # For values computed from another one: (how, what), e.g. ("id", <tensor>),
    # ("data_ptr", <tensor>).  Lets a rule see what a number stands for.
    derived: tuple[str, Value] | None = None
    # Where the value was made, for related spans.
    origin: cst.CSTNode | None = field(default=None, compare=False)

    @property
    def is_tensor_like(self) -> bool:
        return self.kind in (Kind.TENSOR, Kind.STORAGE, Kind.TYPED_STORAGE)

    def with_saves_renamed(self, mapping: dict[int, int]) -> Value:
        """This value with save ids renamed in the graphs it holds."""
        return self

    def with_storage_renamed(self, old: object, new: object) -> Value:
        """This value with the storage token ``old`` renamed ``new`` wherever it holds it."""
        return self

    # The tensor facts (see TensorValue), not known here.
    @property
    def storage(self) -> object:
        return None

    @property
    def requires_grad(self) -> bool | None:
        return None

    @property
    def leaf(self) -> bool:
        return False

    @property
    def via(self) -> str | None:
        return None

    @property
    def expanded(self) -> bool:
        return False

    @property
    def region(self) -> tuple | None:
        return None

    @property
    def maybe_of(self) -> object:
        return None

    @property
    def view_origin(self) -> cst.CSTNode | None:
        return None

    @property
    def same_as(self) -> cst.CSTNode | None:
        return None

    @property
    def layout_origin(self) -> cst.CSTNode | None:
        return None

    @property
    def copied_at(self) -> cst.CSTNode | None:
        return None

    @property
    def snapshot(self) -> cst.CSTNode | None:
        return None

    @property
    def replica(self) -> cst.CSTNode | None:
        return None


@quick
@dataclass(frozen=True, kw_only=True)
class TensorValue(Value):
    """A torch.Tensor."""

    kind: Kind = field(default=Kind.TENSOR, init=False)
    storage: object = None  # token: equal tokens are one storage; None: not known
    counter: object = None  # version-counter token (`.data` has its own)
    requires_grad: bool | None = None
    leaf: bool = False
    # How it reaches its storage: None (owns it), "view", "detach", "data".
    via: str | None = None
    # Ids of the saves made by the graph that produced it: a backward pass
    # through this value reads them.
    graph: frozenset[int] = frozenset()
    # Ids of conditional saves (Save.conditional) that a backward pass from this value
    # proves were made: it was computed from their op's result through ops with one
    # differentiable input each, so if it requires grad (as `backward()` needs), so did
    # every tensor on that chain.
    pending: frozenset[int] = frozenset()
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
    # Whether `maybe_of` holds depends on sizes not known here (`reshape` of a transposed
    # tensor): a view only for sizes that let the strides merge (often only a dim of 1), a
    # copy for the rest.
    alias_by_layout: bool = False
    # A fresh copy of another tensor (advanced indexing, index_select…): where.
    copied_at: cst.CSTNode | None = field(default=None, compare=False)
    # A reference kept as if it were a copy (`prev = w`): the expression that made it.
    snapshot: cst.CSTNode | None = field(default=None, compare=False)
    # The part of its base a slice view covers along dim 0 (see slice_region).
    region: tuple | None = None
    # An element taken from a container built by repeating one object
    # (`[t] * n`): the container's construction.
    replica: cst.CSTNode | None = field(default=None, compare=False)
    # A view autograd forbids writing in place under grad mode, of a base that requires
    # grad: (why, where it was made, what made it).  Why: "multi-output" (an output of
    # `unbind` / `split` / `chunk`, or an element of iterating a tensor), "grad-off" (made
    # under `no_grad` / `inference_mode`), "custom" (returned by a custom
    # `autograd.Function`).  Views of it are forbidden too.
    forbidden: tuple[str, cst.CSTNode, str] | None = field(default=None, compare=False)
    # Sizes and strides when literals prove them (see shapes.py); its dtype ("float32")
    # when a factory, a conversion or a NumPy array proves it.
    layout: Layout | None = None
    dtype: str | None = None
    # Made by a factory of one constant value (`zeros`, `empty`, `full`, `ones_like`), or a
    # view of one: a placeholder the code fills, through views as often as not.
    blank: bool = False
    # A view made through a view op (`t()`, `narrow`, `view`, `diagonal`, ...), not only by
    # indexing or iterating: code that names one treats it as a tensor of its own.
    op_view: bool = False
    # The part of its base a basic index covers, one region per dim (see index_regions).
    index: tuple | None = None
    # The elements of its root a view with literal offsets and strides reaches (see
    # geometry.covers_disjoint): (the root, constraints on the root's indices).
    cover: tuple | None = None
    # An element of a container taken by an index the code does not pin down (see
    # containers.guessed): what rests on which element it is, is `low`.
    guessed: bool = field(default=False, compare=False)
    # Some element of a container whose elements are tensors of different storages (the
    # outputs of a loop's iterations, `feats.append(x)` after `x = stage(x)`; of the layers
    # an unrolled loop ran): their storage tokens.  A write to it may reach any of them, so
    # it reaches the saves of each (see containers.join_elements).
    among: frozenset = field(default=frozenset(), compare=False)
    # A call that returns its source only sometimes (`.float()`, `.contiguous()`, `.to()`)
    # proven by the facts to have returned it here: the value is that source.
    same_as: cst.CSTNode | None = field(default=None, compare=False)
    # A call the facts say returns its input itself or a fresh copy, never a view of it
    # (`.to()`, `.float()`, `.contiguous()`, `.cpu()`; ops.json's `returns_input`), not
    # proven either way here: that input.  It shares memory with another tensor only if
    # the input does, so `is` against it asks whether the call copied.
    input_or_copy: TensorValue | None = field(default=None, compare=False)

    def with_saves_renamed(self, mapping: dict[int, int]) -> TensorValue:
        if not self.graph or mapping.keys().isdisjoint(self.graph):
            return self
        return replace(self, graph=frozenset(mapping.get(i, i) for i in self.graph),
                       pending=frozenset(mapping.get(i, i) for i in self.pending))

    def with_storage_renamed(self, old: object, new: object) -> TensorValue:
        source = self.input_or_copy
        renamed = source.with_storage_renamed(old, new) if source is not None else None
        among = frozenset(new if token == old else token for token in self.among) \
            if old in self.among else self.among
        if old not in (self.storage, self.counter, self.maybe_of):
            return self if renamed is source and among is self.among else \
                replace(self, input_or_copy=renamed, among=among)
        return replace(self, storage=new if self.storage == old else self.storage,
                       counter=new if self.counter == old else self.counter,
                       maybe_of=new if self.maybe_of == old else self.maybe_of,
                       input_or_copy=renamed, among=among)


@quick
@dataclass(frozen=True, kw_only=True)
class ArrayValue(Value):
    """A NumPy array: its buffer may be a tensor's storage."""

    kind: Kind = field(default=Kind.NDARRAY, init=False)
    storage: object = None
    # Where it was made from a tensor (or a tensor from it): the shared buffer.
    view_origin: cst.CSTNode | None = field(default=None, compare=False)
    dtype: str | None = None  # as the torch dtype a tensor sharing it has ("uint8")
    # Shares a tensor's memory only if that tensor is on the CPU (`t.cpu().numpy()`).
    device_assumed: bool = field(default=False, compare=False)

    def with_storage_renamed(self, old: object, new: object) -> ArrayValue:
        return replace(self, storage=new) if self.storage == old else self


@quick
@dataclass(frozen=True, kw_only=True)
class ModuleValue(Value):
    """An nn.Module instance."""

    kind: Kind = field(default=Kind.MODULE, init=False)
    module: ModuleInfo = field(compare=False)
    # A second name for it kept as if it were a copy (`best_model = model`).
    snapshot: cst.CSTNode | None = field(default=None, compare=False)


@quick
@dataclass(frozen=True, kw_only=True)
class ParamsValue(Value):
    """Parameters: `model.parameters()` (PARAMS), an optimizer over them
    (OPTIMIZER), or a dict or list of them (OTHER: `model.state_dict()`)."""

    params: frozenset = frozenset()  # their storage tokens
    # The state dict or list kept as if it were a copy: the call that made it.
    snapshot: cst.CSTNode | None = field(default=None, compare=False)


@quick
@dataclass(frozen=True, kw_only=True)
class ContainerValue(Value):
    """A tuple or list whose elements are known."""

    kind: Kind = field(default=Kind.OTHER, init=False)
    # Every element is this value (`q, k, v = x.chunk(3)`).
    each: Value | None = None
    # A display's elements, in order (`x, y` in `a, b = x, y`).
    items: tuple[Value, ...] | None = field(default=None, compare=False)
    # Built by repeating one object (`[t] * n`): where.
    replicated: cst.CSTNode | None = field(default=None, compare=False)
    # A dict (iterating it gives its keys); `keys`: the literal key of each of `items`.
    mapping: bool = False
    keys: tuple | None = field(default=None, compare=False)

    def members(self) -> tuple[Value, ...]:
        """The values it knows of its elements: each item, and the one value of every element."""
        return (*(self.items or ()), *((self.each,) if self.each is not None else ()))

    @property
    def snapshot(self) -> cst.CSTNode | None:
        """Where an element was kept as a snapshot (`{"model": model.state_dict()}`): the
        container holds the same tensors, not copies."""
        for element in self.members():
            if element.snapshot is not None:
                return element.snapshot
        return None

    def with_saves_renamed(self, mapping: dict[int, int]) -> ContainerValue:
        each = self.each.with_saves_renamed(mapping) if self.each is not None else None
        items = None if self.items is None else tuple(
            item.with_saves_renamed(mapping) for item in self.items)
        if each is self.each and items == self.items:
            return self
        return replace(self, each=each, items=items)

    def with_storage_renamed(self, old: object, new: object) -> ContainerValue:
        each = self.each.with_storage_renamed(old, new) if self.each is not None else None
        items = None if self.items is None else tuple(
            item.with_storage_renamed(old, new) for item in self.items)
        if each is self.each and (items is None or all(
                a is b for a, b in zip(items, self.items or ()))):
            return self
        return replace(self, each=each, items=items)


@quick
@dataclass(frozen=True, kw_only=True)
class KeywordsValue(Value):
    """What a `**kwargs` parameter collected at a call: names and values, in order."""

    kind: Kind = field(default=Kind.OTHER, init=False)
    items: tuple[tuple[str, Value], ...] = field(default=(), compare=False)


@quick
@dataclass(frozen=True, kw_only=True)
class RefValue(Value):
    """A reference to an importable name: a module, class or function."""

    kind: Kind = field(default=Kind.REF, init=False)
    qualname: str
    # The checked file whose import made it (its roots resolve the name); "" for others.
    importer: str = field(default="", compare=False)


@quick
@dataclass(frozen=True, kw_only=True)
class FunctionValue(Value):
    """A function defined in the checked file."""

    kind: Kind = field(default=Kind.FUNCTION, init=False)
    qualname: str
    definition: cst.FunctionDef = field(compare=False)


@quick
@dataclass(frozen=True, kw_only=True)
class PartialValue(Value):
    """`functools.partial(func, *args, **kwargs)`: calling it calls ``func`` with these
    arguments first (each as its expression and its value)."""

    kind: Kind = field(default=Kind.FUNCTION, init=False)
    func: Value
    site: int  # id of the `partial(...)` call: two partials are one value only if one site
    args: tuple = field(default=(), compare=False)


@quick
@dataclass(frozen=True, kw_only=True)
class LambdaValue(Value):
    """A lambda: calling it evaluates its body with the arguments bound to its parameters,
    in the scope it was defined in (``scope``, an Env)."""

    kind: Kind = field(default=Kind.FUNCTION, init=False)
    definition: cst.Lambda = field(compare=False)
    site: int
    scope: object = field(default=None, compare=False)


@quick
@dataclass(frozen=True, kw_only=True)
class ClassValue(Value):
    """A class defined in the checked file."""

    kind: Kind = field(default=Kind.CLASS, init=False)
    qualname: str
    # A module class: what its instances are; None for other classes.
    module: ModuleInfo | None = field(default=None, compare=False)
    # A plain class: its methods and attributes.
    info: ClassInfo | None = field(default=None, compare=False)


@quick
@dataclass(frozen=True, kw_only=True)
class ObjectValue(Value):
    """An instance of a class of the checked file that is not a module: its
    attributes are known, nothing else."""

    kind: Kind = field(default=Kind.UNKNOWN, init=False)
    cls: ClassInfo = field(compare=False)
    exact: bool = field(default=True, compare=False)  # as ModuleInfo.exact


@quick
@dataclass(frozen=True, kw_only=True)
class InstanceValue(Value):
    """An instance of a library class whose documented methods the interpreter follows
    (`torch.amp.GradScaler`, `accelerate.Accelerator`; see training.py): ``qualname``
    names the class as training.INSTANCES does."""

    kind: Kind = field(default=Kind.UNKNOWN, init=False)
    qualname: str


@quick
@dataclass(frozen=True, kw_only=True)
class HooksValue(Value):
    """`torch.autograd.graph.saved_tensors_hooks(pack, unpack)` before a `with` enters it,
    when `pack` is a function of this file that writes its argument in place: the write."""

    kind: Kind = field(default=Kind.OTHER, init=False)
    pack_write: cst.CSTNode = field(compare=False)
    pack_stmt: cst.CSTNode = field(compare=False)


@quick
@dataclass(frozen=True, kw_only=True)
class HandleValue(Value):
    """What `register_forward_hook` returns: `remove()` (or leaving it as a `with` block)
    takes the hook off the list it was put on."""

    kind: Kind = field(default=Kind.OTHER, init=False)
    hooks: list = field(compare=False)
    hook: object = field(compare=False)


@quick
@dataclass(frozen=True, kw_only=True)
class GradModeValue(Value):
    """`torch.no_grad()` and friends, before a `with` enters them."""

    kind: Kind = field(default=Kind.GRAD_MODE, init=False)
    enabled: bool | None = None  # grad mode inside the block; None: not known


@quick
@dataclass(frozen=True, kw_only=True)
class ConstValue(Value):
    """A literal a function's parameter holds at a call (`mode="copy"`, a default `False`):
    a branch it decides can be judged for that call."""

    kind: Kind = field(default=Kind.OTHER, init=False)
    literal: object = None


UNKNOWN = Value(Kind.UNKNOWN)
# What a recursive call returns in the first round of its summary's fixed point: nothing yet
# (a path through it returns no value); compared by identity.
BOTTOM = Value(Kind.UNKNOWN, qualname="<bottom>")
OTHER = Value(Kind.OTHER)
# A Python int: a literal, a `range()` variable, `len()`, `.size(i)`, and int arithmetic on
# them.  Indexing a tensor with one is basic indexing, which makes a view.
INT = Value(Kind.OTHER, qualname="int")
TRUE_VALUE = Value(Kind.OTHER, qualname="True")
FALSE_VALUE = Value(Kind.OTHER, qualname="False")
# `t.shape` / `t.size()`: indexing it gives an int.
SHAPE = Value(Kind.OTHER, qualname="shape")


def is_int(value: Value) -> bool:
    return value.kind is Kind.OTHER and value.qualname == "int"

# A call's arguments, each with its value; its keyword arguments' values and expressions.
Args = list[tuple[cst.Arg, Value]]
Keywords = dict[str, tuple[Value, cst.BaseExpression]]

# What an in-place write can target: a tensor or an array.
Written = TypeVar("Written", bound=TensorValue | ArrayValue)


def join(a: Value, b: Value) -> Value:
    """The value a name holds after two paths meet: only what both agree on."""
    if isinstance(a, ContainerValue) and isinstance(b, ContainerValue):
        modules = join_module_lists(a, b)
        if modules is not None:
            return modules
    if isinstance(a, ContainerValue) and isinstance(b, ContainerValue) and \
            a.replicated is None and b.replicated is None:
        return join_containers(a, b)
    if a is b or a == b:  # (a dataclass's `==` compares every field, also of one object)
        # Equal values of one class, made by two calls: the facts outside
        # equality (which module, which class) come from one path only.
        if isinstance(a, ModuleValue) and isinstance(b, ModuleValue):
            if a.module is b.module:
                return a
            layers = join_module_containers(a, b) \
                if a.snapshot is None and b.snapshot is None else None
            if layers is not None:
                return layers
            # Two modules: a second name kept as a copy on one path is a hazard there.
            return a if a.snapshot is not None else b if b.snapshot is not None else UNKNOWN
        if isinstance(a, ClassValue) and isinstance(b, ClassValue) and a.module is not b.module:
            return replace(a, module=None)
        if isinstance(a, ObjectValue) and isinstance(b, ObjectValue) and a.cls is not b.cls:
            return Value(Kind.UNKNOWN, qualname=a.qualname, origin=a.origin)
        return a
    if a.snapshot is not None or b.snapshot is not None:
        # A snapshot taken on one path is a hazard on that path: keep it.
        kept, other = (a, b) if a.snapshot is not None else (b, a)
        if other.kind in (Kind.OTHER, Kind.UNKNOWN):
            return kept
    if isinstance(a, TensorValue) and b.kind is Kind.OTHER or \
            isinstance(b, TensorValue) and a.kind is Kind.OTHER:
        # `loss = 0.0` before a loop that makes it a tensor: only the tensor has a graph a
        # backward pass can run through, so keep that graph (and nothing about its memory).
        tensor = a if isinstance(a, TensorValue) else b
        assert isinstance(tensor, TensorValue)
        return TensorValue(origin=tensor.origin, graph=tensor.graph, pending=tensor.pending)
    if a.kind is not b.kind or a.kind in (Kind.REF, Kind.FUNCTION, Kind.CLASS, Kind.MODULE):
        return UNKNOWN
    if isinstance(a, TensorValue) and isinstance(b, TensorValue):
        same_storage = a.storage == b.storage
        return TensorValue(
            origin=a.origin,
            storage=a.storage if same_storage else None,
            counter=a.counter if same_storage and a.counter == b.counter else None,
            requires_grad=a.requires_grad if a.requires_grad == b.requires_grad else None,
            leaf=a.leaf and b.leaf,
            via=a.via if a.via == b.via else None,
            graph=a.graph | b.graph,
            pending=a.pending & b.pending,
            layout=a.layout if a.layout == b.layout else None,
            dtype=a.dtype if a.dtype == b.dtype else None,
            blank=a.blank and b.blank, op_view=a.op_view and b.op_view,
            index=a.index if a.index == b.index else None,
            cover=a.cover if a.cover == b.cover else None,
            guessed=a.guessed or b.guessed,
            among=a.among | b.among if a.among and b.among else frozenset(),
            input_or_copy=_input_or_copy(a, b),
        )
    return bare(a.kind, a.origin)


def _input_or_copy(a: TensorValue, b: TensorValue) -> TensorValue | None:
    """Where paths meet, a tensor that is one input itself or a copy of it on each path
    (`original = grad` then `grad = grad.float()` on one branch): that input."""
    def source(value: TensorValue) -> TensorValue:
        return value.input_or_copy if value.input_or_copy is not None else value
    first, second = source(a), source(b)
    if first is not second or first is a and second is b:
        return None
    return first


def bare(kind: Kind, origin: cst.CSTNode | None = None) -> Value:
    """A value of ``kind`` about which nothing more is known."""
    if kind is Kind.NDARRAY:
        return ArrayValue(origin=origin)
    if kind in (Kind.PARAMS, Kind.OPTIMIZER):
        return ParamsValue(kind, origin=origin)
    if kind is Kind.GRAD_MODE:
        return GradModeValue(origin=origin)
    return Value(kind, origin=origin)


def root_of(value: TensorValue) -> tuple | None:
    """What a cover of a view of ``value`` is relative to: a tensor that owns its storage."""
    if value.via is not None or value.storage is None:
        return None
    return (value.storage, id(value.origin))


def earlier(token: object) -> tuple:
    """The token of the tensors an allocation site in a loop made in earlier iterations
    (see `Loops.renew`)."""
    return ("earlier", token)


def refers_to(value: Value, tokens: set) -> bool:
    """Does ``value`` reach any of these storages (itself, or holding them)?"""
    if value.storage in tokens or value.maybe_of in tokens:
        return True
    if isinstance(value, ParamsValue):
        return not value.params.isdisjoint(tokens)
    if isinstance(value, ContainerValue):
        # Only a container holding a snapshot: its elements are then known to be the
        # source's own tensors (other containers' elements are followed where written).
        return value.snapshot is not None and any(
            refers_to(element, tokens) for element in value.members())
    return isinstance(value, ModuleValue) and not value.module.params.isdisjoint(tokens)


def grad_token(storage: object) -> tuple:
    """The storage of the `.grad` tensor of the parameter whose storage is ``storage``."""
    return ("grad", storage)


def grad_of(storage: object) -> object | None:
    """The parameter whose `.grad` has this storage, or None."""
    if isinstance(storage, tuple) and len(storage) == 2 and storage[0] == "grad":
        return storage[1]
    return None


def kept_attribute(node: cst.BaseExpression, value: Value) -> bool:
    """`previous = model.weight`, `first = p.grad`: a module's parameter or a parameter's
    gradient under a second name. Such a name is often just a short handle on the current
    tensor, so AL207 reports it only where the code reads it beside the source itself."""
    return type(node) is cst.Attribute and isinstance(value, TensorValue) and \
        value.storage is not None and value.via is None and \
        (value.leaf is True or grad_of(value.storage) is not None)


def kept_as_copy(value: Value, node: cst.CSTNode, origin: cst.CSTNode | None = None) -> Value:
    """``value`` under a second name kept as if it were a copy (`prev = w`,
    `best = model`, `list(state)`): ``node`` made the reference."""
    origin = origin or value.origin
    if isinstance(value, TensorValue):
        return replace(value, snapshot=node, origin=origin)
    if isinstance(value, ModuleValue):
        return replace(value, snapshot=node, origin=origin)
    if isinstance(value, ParamsValue):
        return replace(value, snapshot=node, origin=origin)
    return value


def any_element(container: ContainerValue) -> Value | None:
    """What every element of ``container`` is, if one value; taken from `[t] * n`,
    it is a replica of the one tensor."""
    each = container.each
    if isinstance(each, TensorValue):
        return replace(each, replica=container.replicated or each.replica)
    return each


def local_class(value: Value) -> ClassInfo | None:
    """The class of this file whose `self.<attr>` values an instance (or a module
    class itself) shows."""
    if isinstance(value, (ModuleValue, ClassValue)):
        return value.module.cls if value.module is not None else None
    if isinstance(value, ObjectValue):
        return value.cls
    return None


def is_true(value: Value | None) -> bool:
    """A value known to be the literal True (`True` here, or a parameter a call set to it)."""
    return value == TRUE_VALUE or isinstance(value, ConstValue) and value.literal is True


def module_items(value: Value) -> tuple[ModuleValue, ...] | None:
    """The modules of a list of modules, in order: a display or a list grown by appends
    (possibly empty), or a comprehension's one element, repeated.  None for anything else."""
    if not isinstance(value, ContainerValue):
        return None
    if value.items is not None and all(isinstance(item, ModuleValue) for item in value.items):
        return tuple(item for item in value.items if isinstance(item, ModuleValue))
    if isinstance(value.each, ModuleValue) and value.replicated is None:
        # `[Block() for _ in range(n)]`: a new Block per element, run twice as a loop body.
        return (value.each, value.each)
    return None


def ordered_positional(args: Sequence[tuple[cst.Arg, Value]]) -> tuple[tuple[str, Value], ...]:
    """A call's positional arguments in order, each with its star (`""` or `"*"`)."""
    return tuple((arg.star, value) for arg, value in args
                 if arg.keyword is None and arg.star != "**")


def spread_modules(ordered: tuple[tuple[str, Value], ...]) -> tuple[ModuleValue, ...] | None:
    """The modules a container's positional arguments give, lists spread by `*` in place;
    None where one is not known to be a module or a list of modules."""
    found: list[ModuleValue] = []
    for star, value in ordered:
        items = module_items(value) if star else \
            (value,) if isinstance(value, ModuleValue) else None
        if items is None:
            return None
        found += items
    return tuple(found)


def module_list(items: tuple[ModuleValue, ...], origin: cst.CSTNode | None) -> ContainerValue:
    return ContainerValue(origin=origin, items=items)


def join_module_lists(a: ContainerValue, b: ContainerValue) -> ContainerValue | None:
    """Two lists of modules where paths meet, as one concrete path's list.  One list that
    extends the other (a branch that appends, a loop's next iteration) gives the longer; a
    loop whose body appends the same modules again stops at two copies of them, the point
    where a save of one iteration meets a write of the next.  None when either is not a
    displayed list of modules."""
    first, second = module_items(a), module_items(b)
    if first is None or second is None or a.items is None or b.items is None:
        return None
    return a if _first_layers(first, second) else b


def join_module_containers(a: ModuleValue, b: ModuleValue) -> ModuleValue | None:
    """Two containers of known layers where paths meet (`self.layers.append(m)` in a
    branch or a loop), as `join_module_lists` picks lists.  None for other modules."""
    first, second = a.module.children, b.module.children
    if first is None or second is None or a.module.spec is None or \
            a.module.spec != b.module.spec or not a.module.spec.container or \
            a.module.element is not None or b.module.element is not None or \
            not all(x is y for x, y in zip(first, second)):
        # Only one container grown along two paths shares its earlier layers (a copy made
        # by `copy.deepcopy` has layers of its own).
        return None
    return a if _first_layers(first, second) else b


def _first_layers(first: tuple[ModuleValue, ...], second: tuple[ModuleValue, ...]) -> bool:
    """Which of two paths' layers to keep (True: the first): the longer where one extends
    the other, stopping at two copies of what a loop's body appends."""
    short, long = (first, second) if len(first) <= len(second) else (second, first)
    if not all(_same(x, y) for x, y in zip(short, long)):
        return len(first) >= len(second)
    extra = long[len(short):]
    if not extra or (len(short) >= 2 * len(extra) and all(
            _same(x, y) for x, y in zip(short[-2 * len(extra):], extra + extra))):
        return short is first
    return long is first


def _same(a: ModuleValue, b: ModuleValue) -> bool:
    """Made by the same constructor call with the same facts (a loop's passes build new
    values for the same modules)."""
    return a.origin is b.origin and a.module.inplace == b.module.inplace and \
        a.module.spec == b.module.spec and a.module.cls is b.module.cls


def elements(container: ContainerValue) -> tuple[Value, ...] | None:
    """Every element the container may hold, or None when not known."""
    if container.items is not None:
        return container.items
    element = any_element(container)
    return (element,) if element is not None else None


# At most this many tensors are told apart in "some element" (beyond: not known).
MAX_AMONG = 16


def candidates(value: TensorValue) -> frozenset | None:
    """The storages a tensor element may be: its own, or those of the elements it joins."""
    if value.among:
        return value.among
    return frozenset({value.storage}) if value.storage is not None else None


def join_elements(a: Value, b: Value) -> Value:
    """Two values that may be one element: their join, which for tensors of different
    storages (a loop's outputs, `x = stage(x)` then `feats.append(x)`; the outputs of the
    layers an unrolled loop ran) keeps the storages it may be (TensorValue.among)."""
    joined = join(a, b)
    if not (isinstance(a, TensorValue) and isinstance(b, TensorValue) and
            isinstance(joined, TensorValue)) or joined.storage is not None:
        return joined
    first, second = candidates(a), candidates(b)
    if first is None or second is None or len(first | second) > MAX_AMONG:
        return joined
    return replace(joined, among=first | second)


def some_element(container: ContainerValue) -> Value | None:
    """The join of the elements: what an element picked by an unknown index is."""
    found = elements(container)
    if not found:
        return None
    result = found[0]
    for other in found[1:]:
        result = join_elements(result, other)
    return result


def join_containers(a: ContainerValue, b: ContainerValue) -> ContainerValue:
    """Two paths' containers: element by element where both know the same layout."""
    if a.items is not None and b.items is not None and len(a.items) == len(b.items) and \
            a.keys == b.keys and a.mapping == b.mapping:
        return replace(a, items=tuple(join_elements(x, y) for x, y in zip(a.items, b.items)),
                       each=join_elements(a.each, b.each) if a.each is not None and
                       b.each is not None
                       else None)
    left, right = some_element(a), some_element(b)
    if a.items == () or b.items == ():
        # One path left it empty (the list before a loop appends to it): every element
        # there may be is the other path's.
        each = right if a.items == () else left
    else:
        each = join_elements(left, right) if left is not None and right is not None \
            else None
    return ContainerValue(origin=a.origin, each=each, mapping=a.mapping and b.mapping)


@dataclass(eq=False)
class ClassInfo:
    name: str
    node: cst.ClassDef
    is_module: bool
    methods: dict = field(default_factory=dict)  # name -> FunctionDef
    attrs: dict = field(default_factory=dict)  # self.<attr> after __init__
    params: frozenset = frozenset()  # parameter tokens its __init__ creates
    self_token: object = None
    bases: tuple = ()  # local base classes (modules and plain classes), in order
    # The method resolution order (C3, as Python computes it): the class, its local
    # bases, and a name (str) for each base not defined in the file that may define
    # methods; torch's own module bases and `object` are left out (see dispatch.py).
    mro: tuple = ()
    # Names the class body binds other than by `def` (`forward = _forward_impl`,
    # `act = staticmethod(gelu)`): they hide a base's method of that name.
    class_names: frozenset = frozenset()
    lightning: bool = False  # a LightningModule (training.py)
    autograd_function: bool = False  # a subclass of torch.autograd.Function
    learned: bool = False  # `attrs` holds what an `__init__` run set
    # The torch.nn class it subclasses (`class Stage(nn.Sequential)`), if one of the tables.
    torch_base: str | None = None
    # Hooks its methods register on `self` (see protocol.Hook): every instance has them.
    hooks: list = field(default_factory=list)
    # Tensors a method keeps on the object (`self.last_attn = attn` in `forward`), by
    # attribute key, as a summarised call of that method left them: any other method reads
    # the same tensor there (see state_token).
    state: dict = field(default_factory=dict)

    def linearization(self) -> tuple:
        return self.mro or (self, *self.bases)

    def attr(self, key: str) -> Value | None:
        """`self.<attr>` as __init__ (its own or a local base's) left it."""
        if key in self.attrs:
            return self.attrs[key]
        for base in self.bases:
            value = base.attr(key)
            if value is not None:
                return value
        return None

    def method(self, name: str, after: ClassInfo | None = None) -> cst.FunctionDef | None:
        """The definition `self.<name>` runs on an instance of exactly this class (with
        ``after``: what `super()` in a method of ``after`` finds).  A base not defined in
        the file met first may define it: not known."""
        order = self.linearization()
        if after is not None:
            if after not in order:
                return None
            order = order[order.index(after) + 1:]
        for entry in order:
            if isinstance(entry, str):
                return None
            if name in entry.methods:
                return entry.methods[name]
            if name in entry.class_names:
                return None
        return None

    def all_params(self) -> frozenset:
        return self.params.union(*(base.all_params() for base in self.bases))
