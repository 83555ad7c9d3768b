"""The abstract interpreter: what each name holds, statement by statement.

One pass over a libcst module evaluates every expression to an abstract
``Value`` and keeps, per path through the code, the facts the rules need:
which storage each tensor lives in (one token per allocation site; views keep
their base's token), which version counter it bumps (``.data`` gets its own),
whether it requires grad, which storages autograd saved for a backward pass
that has not run yet, and which in-place writes dirtied those saves.  It
records ``Event``s at the points rules care about; rules read the events and
never walk the tree themselves.

Precision comes first.  A value is a tensor only when local code proves it
(a torch factory, a Tensor method's result, an annotation, a parameter of a
module's ``forward``), two values share a storage only when they provably
do, and a tensor requires grad only when a parameter or ``requires_grad=True``
says so.  What the interpreter cannot prove is unknown, and rules stay quiet
about unknowns.  A hazard becomes an event only when it is complete on one
path: saved, then written, then reached by a backward pass (or returned to
the caller, who will run it).
"""

from __future__ import annotations

import builtins
import itertools
from dataclasses import dataclass, field, replace
from functools import cache
from enum import Enum
from typing import Iterator

import libcst as cst

from aliaslint import ops


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
    # The part of its base a slice view covers along dim 0 (see _slice_region).
    region: tuple | None = None

    @property
    def is_tensor_like(self) -> bool:
        return self.kind in (Kind.TENSOR, Kind.STORAGE, Kind.TYPED_STORAGE)


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


# ---------------------------------------------------------------------------
# Facts about saves and writes.


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


@dataclass(frozen=True)
class Write:
    """An in-place write to a storage."""

    node: cst.CSTNode
    stmt: cst.CSTNode
    target: Value | None  # None for optimizer.step() (many parameters)
    target_node: cst.CSTNode | None
    # What writes, when the source at ``node`` does not say it: the module
    # "`nn.ReLU(inplace=True)`" run by `self.relu(x)`; None: ``node`` itself.
    label: str | None
    via: str | None  # the target's `via`: None, "view", "detach" or "data"
    activation: bool  # an in-place activation (`inplace=True`, `relu_`)
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
    # The in-place op's other tensor inputs (value, node), to find overlaps.
    inputs: tuple = ()
    # The written part of the target along dim 0, when literal slices say it;
    # () for an item assignment whose part is not known; None: all of it.
    region: tuple | None = None


# ---------------------------------------------------------------------------
# Events: the facts rules consume.


@dataclass(frozen=True)
class Event:
    node: cst.CSTNode
    # The enclosing simple statement or compound statement header: a
    # suppression comment on its first line covers the finding.
    stmt: cst.CSTNode


@dataclass(frozen=True)
class Compare(Event):
    operator: str  # "==", "!=", "is", "is not", "<", …
    left: Value
    right: Value
    left_node: cst.BaseExpression
    right_node: cst.BaseExpression


@dataclass(frozen=True)
class Call(Event):
    qualname: str | None  # resolved callee: "torch.zeros", "torch.Tensor.storage", …
    receiver: Value | None  # the object a method was called on
    receiver_node: cst.BaseExpression | None
    result: Value


@dataclass(frozen=True)
class Reference(Event):
    qualname: str  # an importable name used in the code: "torch.FloatStorage"


@dataclass(frozen=True)
class InplaceWrite(Event):
    write: Write


@dataclass(frozen=True)
class SavedWrite(Event):
    """A storage saved for backward was written in place, and a backward pass
    (or the caller, through a returned tensor) will read the saved value."""

    write: Write
    save: Save
    consumer: cst.CSTNode
    consumer_label: str | None  # None: the call at ``consumer``; or "the tensor returned here"
    returned: bool


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


@dataclass(frozen=True)
class NonContiguousView(Event):
    """`.view()` of a tensor whose layout is known to be non-contiguous."""

    receiver: Value
    receiver_node: cst.CSTNode


@dataclass(frozen=True)
class LostWrite(Event):
    """An in-place write into a temporary copy whose result nobody keeps."""

    write: Write


# ---------------------------------------------------------------------------

_COMPARE_OPS = {
    cst.Equal: "==",
    cst.NotEqual: "!=",
    cst.Is: "is",
    cst.IsNot: "is not",
    cst.In: "in",
    cst.NotIn: "not in",
    cst.LessThan: "<",
    cst.LessThanEqual: "<=",
    cst.GreaterThan: ">",
    cst.GreaterThanEqual: ">=",
}
_NON_TENSOR_COMPARE = {"is", "is not", "in", "not in"}
_BINARY_DUNDERS = {
    cst.Add: "add", cst.Subtract: "sub", cst.Multiply: "mul", cst.Divide: "truediv",
    cst.FloorDivide: "floordiv", cst.Modulo: "mod", cst.Power: "pow",
    cst.MatrixMultiply: "matmul", cst.BitAnd: "and", cst.BitOr: "or", cst.BitXor: "xor",
    cst.LeftShift: "lshift", cst.RightShift: "rshift",
}
_AUG_DUNDERS = {
    cst.AddAssign: "add", cst.SubtractAssign: "sub", cst.MultiplyAssign: "mul",
    cst.DivideAssign: "truediv", cst.FloorDivideAssign: "floordiv", cst.ModuloAssign: "mod",
    cst.PowerAssign: "pow", cst.MatrixMultiplyAssign: "matmul", cst.BitAndAssign: "and",
    cst.BitOrAssign: "or", cst.BitXorAssign: "xor", cst.LeftShiftAssign: "lshift",
    cst.RightShiftAssign: "rshift",
}
_BUILTINS = frozenset(dir(builtins))
_MODULE_BASES = {"torch.nn.Module", "torch.nn.modules.module.Module"}
_TENSOR_TYPES = {"torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter"}
_PARAMETER_TYPES = {"torch.nn.Parameter", "torch.nn.parameter.Parameter"}
# Python-level Tensor methods (not ATen ops, so not in the op tables).
_STORAGE_METHODS = {"untyped_storage": Kind.STORAGE, "storage": Kind.TYPED_STORAGE}
_SCALAR_METHODS = {"data_ptr", "item", "tolist", "dim", "numel", "size", "stride",
                   "storage_offset", "is_contiguous", "element_size", "nelement"}
_PARAMETER_METHODS = {"parameters", "named_parameters"}

_TRUE, _FALSE = "True", "False"


def _is_literal(node: cst.CSTNode | None, text: str) -> bool:
    return isinstance(node, cst.Name) and node.value == text


# ---------------------------------------------------------------------------
# The state of one path through a scope.


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
        if name in _BUILTINS:
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
class _Deferred:
    function: cst.FunctionDef
    parent: Env
    cls: ClassInfo | None


@dataclass
class _Summary:
    """What calling a function does, seen from its caller."""

    result: Value
    writes: dict  # argument index -> Write (inside the callee)
    saves: tuple  # (token, Save) pending at return
    returns_arg: int | None  # the result is argument i itself


class Analysis:
    """Runs the interpreter over a module and collects its events."""

    def __init__(self, module: cst.Module):
        self.module = module
        self.events: list[Event] = []
        self._stmt: cst.CSTNode = module
        self._deferred: list[_Deferred] = []
        self._ids = itertools.count(1)
        self._silent = 0  # > 0 while summarising a callee: its events are not reported
        self._summaries: dict = {}
        self._in_progress: set = set()
        self._returns: list | None = None  # values returned in the current function
        self._function: cst.FunctionDef | None = None
        self._top = Env()
        # Module-level names: the statements that bind each, and names some
        # function rebinds with `global`.  A name bound once and never
        # rebound holds the same value whenever a function runs.
        self._bindings: dict[str, set[int]] = {}
        self._rebound: set[str] = set()
        self._outer_cache: dict[int, tuple[Env, Env]] = {}
        self._deferring = False  # running function bodies, the module body done
        self._write_log: list[Write] | None = None  # writes made while summarising
        self._index_values: dict[int, Value] = {}  # subscript index expression → value
        self._rewriting = False  # evaluating the target of an in-place write
        self._expr_dispatch = {
            cst.Name: self._name,
            cst.Attribute: self._attribute,
            cst.Call: self._call,
            cst.Comparison: self._comparison,
            cst.BinaryOperation: self._binary,
            cst.UnaryOperation: self._unary,
            cst.Subscript: self._subscript,
            cst.Integer: self._literal,
            cst.Float: self._literal,
            cst.Imaginary: self._literal,
            cst.SimpleString: self._literal,
            cst.ConcatenatedString: self._concatenated,
            cst.FormattedString: self._formatted,
            cst.BooleanOperation: self._boolean,
            cst.Tuple: self._display,
            cst.List: self._display,
            cst.Set: self._set,
            cst.Dict: self._dict,
            cst.IfExp: self._if_exp,
            cst.NamedExpr: self._named_expr,
            cst.Lambda: self._lambda,
            cst.ListComp: self._comprehension,
            cst.SetComp: self._comprehension,
            cst.GeneratorExp: self._comprehension,
            cst.DictComp: self._comprehension,
        }
        self._stmt_dispatch = {
            cst.SimpleStatementLine: self._simple_line,
            cst.If: self._if,
            cst.For: self._loop,
            cst.While: self._loop,
            cst.With: self._with,
            cst.Try: self._try,
            cst.TryStar: self._try,
            cst.FunctionDef: self._function_def,
            cst.ClassDef: self._class_def,
        }

    def _emit(self, event: Event) -> None:
        if not self._silent:
            self.events.append(event)

    # -- driver -------------------------------------------------------------

    def run(self) -> Analysis:
        env = Env()
        self._top = env
        self._block(self.module.body, env)
        # Function bodies run after the scope that defines them is complete,
        # so they see every module-level import (as pyflakes does).
        self._deferring = True
        while self._deferred:
            deferred = self._deferred.pop(0)
            self._function_body(deferred)
        return self

    # -- statements ---------------------------------------------------------

    def _block(self, body, env: Env) -> None:
        for stmt in body:
            self._statement(stmt, env)

    def _statement(self, stmt: cst.CSTNode, env: Env) -> None:
        handler = self._stmt_dispatch.get(type(stmt))
        if handler is not None:
            handler(stmt, env)
        else:
            # Match and other compound statements: evaluate what they contain,
            # then forget what they bound.
            self._stmt = stmt
            for expr in _expressions_in(stmt):
                self._eval(expr, env)
            for name in _names_bound_in(stmt):
                self._assign_name(name, UNKNOWN, env)

    def _simple_line(self, line: cst.SimpleStatementLine, env: Env) -> None:
        self._stmt = line
        for small in line.body:
            self._small(small, env)

    def _small(self, small: cst.BaseSmallStatement, env: Env) -> None:
        if isinstance(small, cst.Assign):
            value = self._eval(small.value, env)
            if value.kind in (Kind.TENSOR, Kind.MODULE) and _is_alias_expression(small.value):
                # `prev = w`, `best_model = model`: a second name, not a copy.
                value = replace(value, snapshot=small.value)
            for target in small.targets:
                self._bind(target.target, value, env)
        elif isinstance(small, cst.AnnAssign):
            declared = self._annotation(small.annotation, env)
            value = self._eval(small.value, env) if small.value is not None else declared
            if value.kind is Kind.UNKNOWN:
                value = declared
            self._bind(small.target, value, env)
        elif isinstance(small, cst.AugAssign):
            self._aug_assign(small, env)
        elif isinstance(small, cst.Expr):
            self._eval(small.value, env)
        elif isinstance(small, cst.Return):
            returned = small.value
            if isinstance(returned, cst.Tuple):
                # `return h, codes`: the caller gets each tensor.
                for element in returned.elements:
                    value = self._eval(element.value, env)
                    if value.kind is Kind.TENSOR:
                        self._consume(value, small, "the tensor returned here", env,
                                      returned=True, retain=True)
                self._return(OTHER, small, env)
            else:
                self._return(self._eval(returned, env) if returned is not None else OTHER,
                             small, env)
        elif isinstance(small, cst.Import):
            for alias in small.names:
                dotted = _dotted(alias.name)
                if alias.asname is not None:
                    self._assign_name(_alias_name(alias), Value(Kind.REF, qualname=dotted), env)
                else:
                    top = dotted.split(".")[0]
                    self._assign_name(top, Value(Kind.REF, qualname=top), env)
        elif isinstance(small, cst.ImportFrom):
            base = None if small.relative or small.module is None else _dotted(small.module)
            if isinstance(small.names, cst.ImportStar):
                return
            for alias in small.names:
                name = _alias_name(alias)
                if base is None:
                    self._assign_name(name, UNKNOWN, env)
                else:
                    qualname = f"{base}.{_dotted(alias.name)}"
                    self._assign_name(name, Value(Kind.REF, qualname=qualname), env)
                    self._emit(Reference(alias, self._stmt, qualname))
        elif isinstance(small, cst.Del):
            self._forget(small.target, env)
        elif isinstance(small, (cst.Global, cst.Nonlocal)):
            for item in small.names:
                self._rebound.add(item.name.value)
                self._assign_name(item.name.value, UNKNOWN, env)
        else:
            for expr in _expressions_in(small):
                self._eval(expr, env)

    def _assign_name(self, name: str, value: Value, env: Env) -> None:
        env.names[name] = value
        env.flow.stale.pop(name, None)
        if env is self._top:
            self._bindings.setdefault(name, set()).add(id(self._stmt))

    def _bind(self, target, value: Value, env: Env, evaluate_base: bool = True) -> None:
        if isinstance(target, cst.Name):
            self._assign_name(target.value, value, env)
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = target.elements
            if value.items is not None and len(value.items) == len(elements) and not any(
                    isinstance(element, cst.StarredElement) for element in elements):
                for element, item in zip(elements, value.items):
                    self._bind(element.value, item, env, evaluate_base)
                return
            element_value = value.each or UNKNOWN
            for element in elements:
                self._bind(element.value, element_value, env, evaluate_base)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value, OTHER, env, evaluate_base)
        elif isinstance(target, cst.Attribute):
            key = _attr_key(target)
            if evaluate_base:
                self._eval(target.value, env)
            if key is not None:
                self._assign_name(key, value, env)
        elif isinstance(target, cst.Subscript):
            base = self._eval_target(target.value, env) if evaluate_base else UNKNOWN
            self._slices(target, env)
            if evaluate_base and base.kind in (Kind.TENSOR, Kind.NDARRAY):
                assigned = value if value.kind in (Kind.TENSOR, Kind.NDARRAY) else None
                index = _subscript_index_value(target, self._index_values)
                inputs = tuple((v, role) for v, role in ((assigned, "value"), (index, "index"))
                               if v is not None)
                self._write(base, target.value, self._stmt, None, env, fill=True,
                            inputs=inputs, region=_slice_region(target) or ())

    def _forget(self, target, env: Env) -> None:
        if isinstance(target, cst.Name):
            self._assign_name(target.value, UNKNOWN, env)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._forget(element.value, env)

    def _eval_target(self, node, env: Env) -> Value:
        """Evaluate the expression an in-place write is about to change."""
        outer, self._rewriting = self._rewriting, True
        try:
            return self._eval(node, env)
        finally:
            self._rewriting = outer

    def _aug_assign(self, node: cst.AugAssign, env: Env) -> None:
        target = self._eval_target(node.target, env)
        other = self._eval(node.value, env)
        if target.kind is Kind.NDARRAY:
            self._write(target, node.target, node, None, env)
            return
        if target.kind is not Kind.TENSOR:
            self._bind(node.target, UNKNOWN, env, evaluate_base=False)
            return
        # `t += x` on a tensor is the in-place `__iadd__`: it writes t's storage.
        dunder = _AUG_DUNDERS.get(type(node.operator))
        op = ops.method(f"__i{dunder}__") if dunder else None
        result = self._write(target, node.target, node, None, env)
        if op is not None:
            result = self._record_saves(op, {"self": result, "other": other}, result, node, env,
                                        {"self": node.target, "other": node.value})
        self._bind(node.target, result, env, evaluate_base=False)

    def _if(self, node: cst.If, env: Env) -> None:
        self._stmt = node
        self._eval(node.test, env)
        taken = env.copy()
        self._block(node.body.body, taken)
        other = env.copy()
        if isinstance(node.orelse, cst.If):
            self._if(node.orelse, other)
        elif isinstance(node.orelse, cst.Else):
            self._block(node.orelse.body.body, other)
        taken.merge(other)
        env.adopt(taken)

    def _loop(self, node, env: Env) -> None:
        # Two passes reach the fixed point of this small lattice: the second
        # pass starts from the join of "before the loop" and "after one turn",
        # so a hazard carried around the loop is seen.
        before = env.copy()
        for _ in range(2):
            self._stmt = node
            if isinstance(node, cst.For):
                iterable = self._eval(node.iter, env)
                self._bind(node.target, self._element_of(iterable, node), env)
            else:
                self._eval(node.test, env)
            self._block(node.body.body, env)
            env.merge(before)
        if node.orelse is not None:
            self._block(node.orelse.body.body, env)

    def _element_of(self, iterable: Value, node) -> Value:
        if iterable.kind is Kind.PARAMS and iterable.params:
            return self._parameter(iterable.params, node)
        if iterable.each is not None:
            return replace(iterable.each, replica=iterable.replicated or iterable.each.replica)
        return UNKNOWN

    def _parameter(self, tokens: frozenset, origin) -> Value:
        token = next(iter(tokens)) if len(tokens) == 1 else None
        return Value(Kind.TENSOR, origin=origin, storage=token, counter=token,
                     requires_grad=True, leaf=True)

    def _with(self, node: cst.With, env: Env) -> None:
        self._stmt = node
        saved_grad = env.flow.grad
        for item in node.items:
            value = self._eval(item.item, env)
            if value.kind is Kind.GRAD_MODE:
                env.flow.grad = value.derived[0] if value.derived else None
            if item.asname is not None:
                self._bind(item.asname.name, UNKNOWN, env)
        self._block(node.body.body, env)
        env.flow.grad = saved_grad

    def _try(self, node, env: Env) -> None:
        before = env.copy()
        self._block(node.body.body, env)
        # A handler may start anywhere in the body: from what both ends agree on.
        start = before.copy()
        start.merge(env)
        outcomes = []
        for handler in node.handlers:
            handler_env = start.copy()
            self._stmt = handler
            if handler.type is not None:
                self._eval(handler.type, handler_env)
            if handler.name is not None:
                self._bind(handler.name.name, UNKNOWN, handler_env)
            self._block(handler.body.body, handler_env)
            outcomes.append(handler_env)
        if node.orelse is not None:
            self._block(node.orelse.body.body, env)
        for outcome in outcomes:
            env.merge(outcome)
        if node.finalbody is not None:
            self._block(node.finalbody.body.body, env)

    def _function_def(self, node: cst.FunctionDef, env: Env, *, cls: ClassInfo | None = None,
                      scope: Env | None = None) -> None:
        """Bind the function in ``env``; its body later sees ``scope`` (default ``env``)."""
        self._stmt = node
        for decorator in node.decorators:
            self._eval(decorator.decorator, env)
        for param in _all_params(node.params):
            if param.default is not None:
                self._eval(param.default, env)
        env.names[node.name.value] = Value(Kind.FUNCTION, qualname=node.name.value, origin=node)
        if cls is not None:
            cls.methods[node.name.value] = node
        self._deferred.append(_Deferred(node, scope or env, cls))

    def _stable(self, name: str, env: Env) -> bool:
        return env is self._top and len(self._bindings.get(name, ())) == 1 \
            and name not in self._rebound

    def _outer_env(self, env: Env) -> Env:
        """Names a function body sees from its definition scope.

        Imports, functions and classes are stable, and so is a module-level
        name bound once; other variables may change before the function runs,
        so they are not trusted.  Deferred bodies run once their defining scope
        is complete, so one view per scope serves every function in it.
        """
        cached = self._outer_cache.get(id(env))
        if cached is not None and cached[0] is env:
            return cached[1]
        chain = []
        scope: Env | None = env
        while scope is not None:
            chain.append(scope)
            scope = scope.parent
        visible = {}
        for scope in reversed(chain):
            for name, value in scope.names.items():
                if value.kind in (Kind.REF, Kind.FUNCTION, Kind.CLASS) or self._stable(
                        name, scope):
                    visible[name] = value
                else:
                    visible[name] = UNKNOWN
        outer = Env(None, visible)
        if self._deferring:  # the module body may still bind names before that
            self._outer_cache[id(env)] = (env, outer)
        return outer

    def _function_body(self, deferred: _Deferred) -> None:
        node = deferred.function
        cls = deferred.cls
        env = Env(self._outer_env(deferred.parent))
        env.flow.grad = self._decorated_grad_mode(node, env)
        params = _all_params(node.params)
        for index, param in enumerate(params):
            value = UNKNOWN
            if param.annotation is not None:
                value = self._annotation(param.annotation, env)
            elif (cls is not None and cls.is_module and node.name.value == "forward"
                  and index > 0 and param.default is None and param.star == ""
                  and param in node.params.params):
                # nn.Module.forward receives tensors unless it says otherwise.
                value = Value(Kind.TENSOR, origin=param, storage=("arg", index),
                              counter=("arg", index))
            if cls is not None and index == 0 and param in node.params.params:
                value = self._self_value(cls)
            if value.kind is Kind.TENSOR and value.storage is None:
                value = replace(value, storage=("arg", index), counter=("arg", index))
            env.names[param.name.value] = value
        self._run_body(node, env)
        if cls is not None and node.name.value == "__init__":
            self._learn_class(cls, env)

    def _run_body(self, node: cst.FunctionDef, env: Env) -> list:
        outer_returns, outer_function = self._returns, self._function
        self._returns, self._function = [], node
        body = node.body
        if isinstance(body, cst.IndentedBlock):
            self._block(body.body, env)
        else:
            self._stmt = body
            for small in body.body:
                self._small(small, env)
        returns = self._returns
        self._returns, self._function = outer_returns, outer_function
        return returns

    def _decorated_grad_mode(self, node: cst.FunctionDef, env: Env) -> bool | None:
        grad: bool | None = True
        for decorator in node.decorators:
            value = self._eval_silently(decorator.decorator, env)
            if value.kind is Kind.GRAD_MODE:
                grad = value.derived[0] if value.derived else None
            elif value.kind is Kind.REF and value.qualname:
                op = ops.lookup(value.qualname)
                if op is not None and op.kind == "grad_mode":
                    grad = op.extra.get("grad_enabled")
        return grad

    def _eval_silently(self, node, env: Env) -> Value:
        self._silent += 1
        try:
            return self._eval(node, env)
        finally:
            self._silent -= 1

    def _self_value(self, cls: ClassInfo) -> Value:
        if not cls.is_module:
            # A plain object: its attributes are known, nothing else is.
            return Value(Kind.UNKNOWN, qualname=cls.name, module=ModuleInfo(cls=cls))
        info = ModuleInfo(cls=cls, params=frozenset({cls.self_token}), label=f"`{cls.name}`")
        return Value(Kind.MODULE, module=info, origin=cls.node)

    def _learn_class(self, cls: ClassInfo, env: Env) -> None:
        """After __init__: what `self.<attr>` holds in the other methods."""
        params = set()
        for key, value in env.names.items():
            if not key.startswith("self."):
                continue
            cls.attrs[key] = value
            if value.kind is Kind.MODULE and value.module is not None:
                params |= value.module.params
            elif value.kind is Kind.TENSOR and value.leaf and value.requires_grad:
                params.add(value.storage)
        cls.params = frozenset(params)

    def _class_def(self, node: cst.ClassDef, env: Env) -> None:
        self._stmt = node
        is_module = False
        local_bases = []
        for base in node.bases:
            value = self._eval(base.value, env)
            if value.kind is Kind.REF and value.qualname in _MODULE_BASES:
                is_module = True
            elif value.kind is Kind.CLASS and value.module is not None:
                is_module = True
                local_bases.append(value)
            elif value.kind is Kind.REF and value.qualname and value.qualname.startswith(
                    "torch.nn.") and ops.module(value.qualname) is not None:
                is_module = True
        bases = tuple(value.module.cls for value in local_bases)
        cls = ClassInfo(node.name.value, node, is_module, self_token=("self", id(node)),
                        bases=bases)
        class_env = Env(env)
        # __init__ first: the other methods need to know the attributes it sets.
        methods = sorted(
            (stmt for stmt in node.body.body if isinstance(stmt, cst.FunctionDef)),
            key=lambda f: f.name.value != "__init__",
        )
        for stmt in node.body.body:
            if not isinstance(stmt, cst.FunctionDef):
                self._statement(stmt, class_env)
        for stmt in methods:
            # Methods do not see the class body's names (Python's scoping).
            self._function_def(stmt, class_env, cls=cls, scope=env)
        info = ModuleInfo(cls=cls) if is_module else None
        env.names[node.name.value] = Value(Kind.CLASS, qualname=node.name.value, origin=node,
                                           module=info)

    # -- returns, writes, saves, backward ------------------------------------

    def _return(self, value: Value, node, env: Env) -> None:
        if self._returns is not None:
            self._returns.append((value, env.flow.copy()))
        # The caller will run backward through a returned tensor: a dirty save
        # in its graph makes that backward raise.
        if value.kind is Kind.TENSOR and self._function is not None:
            self._consume(value, node, "the tensor returned here", env, returned=True,
                          retain=True)

    def _write(self, target: Value, target_node, node, label: str | None, env: Env, *,
               activation: bool = False, defined_at=None, visible: bool = True,
               fill: bool = False, callee: str | None = None, declared: bool = False,
               inputs: tuple = (), region: tuple | None = None) -> Value:
        """An in-place write to ``target``'s storage; returns the written tensor's value.

        ``visible``: the code at the write names what it writes (`x.relu_()`,
        `inplace=True` at the call), so reading that name later is intended; a
        module built with `inplace=True` elsewhere, or a helper function that
        writes its argument, gives no such hint.
        """
        write = Write(node, self._stmt, target, target_node, label, target.via, activation,
                      env.flow.grad, defined_at, fill, callee, declared, inputs,
                      region if region is not None else target.region)
        self._emit(InplaceWrite(node, self._stmt, write))
        if self._write_log is not None:
            self._write_log.append(write)
        self._dirty(target.storage, write, env)
        if target.copied_at is not None and target.copied_at is target_node and \
                (fill and node is self._stmt or discards(self._stmt, node)):
            # `x[idx][m] = v`, a bare `x[mask].add_(1)`: the copy is dropped at once.
            self._emit(LostWrite(node, self._stmt, write))
        exclude = _names_assigned_by(self._stmt)
        if visible:
            exclude |= _names_of(target_node)
        self._mark_stale({target.storage, target.maybe_of}, write, exclude, env)
        return target

    def _mark_stale(self, tokens: set, write: Write, exclude: set, env: Env) -> None:
        """Every other name that shares memory with ``tokens`` now sees new values."""
        tokens.discard(None)
        if not tokens:
            return
        for name, value in env.names.items():
            if name not in exclude and _refers_to(value, tokens):
                env.flow.stale[name] = write

    def _dirty(self, token, write: Write, env: Env) -> None:
        if token is None:
            return
        for save in env.flow.saves.get(token, ()):
            pair = (write, save)
            if pair not in env.flow.dirty:
                env.flow.dirty = env.flow.dirty + (pair,)

    def _new_save(self, value: Value, node, label: str | None, what: str,
                  env: Env, what_node=None) -> Save | None:
        if value.kind is not Kind.TENSOR or value.storage is None:
            return None
        return self._save(value.storage, value.counter, node, label, what, env, what_node)

    def _save(self, storage, counter, node, label: str | None, what: str, env: Env,
              what_node=None) -> Save:
        """Record that autograd now holds ``storage`` for a pending backward pass."""
        save = Save(next(self._ids), storage, counter, node, label, what, what_node)
        env.flow.saves[storage] = env.flow.saves.get(storage, ()) + (save,)
        return save

    def _consume(self, value: Value, node, label: str | None, env: Env, *,
                 returned: bool = False,
                 retain: bool = False) -> None:
        """A backward pass through ``value``'s graph (or its return to the caller)."""
        graph = value.graph
        if not graph:
            return
        for write, save in env.flow.dirty:
            if save.id in graph:
                self._emit(SavedWrite(write.node, write.stmt, write, save, node, label, returned))
        if retain:
            return
        env.flow.dirty = tuple(d for d in env.flow.dirty if d[1].id not in graph)
        for token in list(env.flow.saves):
            kept = tuple(s for s in env.flow.saves[token] if s.id not in graph)
            if kept:
                env.flow.saves[token] = kept
            else:
                del env.flow.saves[token]

    def _requires_grad(self, inputs: list[Value], env: Env) -> bool | None:
        if env.flow.grad is False:
            return False
        tensors = [v for v in inputs if v.kind is Kind.TENSOR]
        if any(v.requires_grad for v in tensors):
            return True if env.flow.grad else None
        if all(v.requires_grad is False for v in tensors):
            return False
        return None

    def _record_saves(self, op: ops.Op, bound: dict[str, Value], result: Value, node,
                      env: Env, nodes: dict | None = None) -> Value:
        """Autograd's saves for ``op`` at ``node``; returns ``result`` with its graph."""
        inputs = [v for v in bound.values() if v.kind is Kind.TENSOR]
        graph = frozenset().union(*(v.graph for v in inputs)) if inputs else frozenset()
        requires = self._requires_grad(inputs, env)
        result = replace(result, requires_grad=requires, graph=graph | result.graph)
        if requires is not True:
            return result
        saves = _chosen_saves(op, bound)
        if not saves:
            return result
        new = set()
        for name in sorted(saves):
            if name == "result":
                save = self._new_save(result, node, None, "its result", env)
            elif name in bound and _input_saved(name, bound):
                save = self._new_save(bound[name], node, None, "its input", env,
                                      (nodes or {}).get(name))
            else:
                save = None
            if save is not None:
                new.add(save.id)
        return replace(result, graph=result.graph | new)

    # -- expressions --------------------------------------------------------

    def _eval(self, node: cst.BaseExpression, env: Env) -> Value:
        handler = self._expr_dispatch.get(type(node))
        if handler is None:
            return self._generic_unknown(node, env)
        return handler(node, env)

    def _eval_children(self, node: cst.CSTNode, env: Env) -> None:
        for child in _child_expressions(node):
            self._eval(child, env)

    def _generic_unknown(self, node, env: Env) -> Value:
        self._eval_children(node, env)
        return UNKNOWN

    def _literal(self, node, env: Env) -> Value:
        return OTHER

    # Common containers of expressions, walked directly: libcst's generic
    # `children` builds a list through a visitor and costs far more.

    def _boolean(self, node: cst.BooleanOperation, env: Env) -> Value:
        self._eval(node.left, env)
        self._eval(node.right, env)
        return UNKNOWN

    def _concatenated(self, node: cst.ConcatenatedString, env: Env) -> Value:
        self._eval(node.left, env)
        self._eval(node.right, env)
        return OTHER

    def _formatted(self, node: cst.FormattedString, env: Env) -> Value:
        for part in node.parts:
            if isinstance(part, cst.FormattedStringExpression):
                self._eval(part.expression, env)
                if part.format_spec:
                    for spec in part.format_spec:
                        if isinstance(spec, cst.FormattedStringExpression):
                            self._eval(spec.expression, env)
        return OTHER

    def _set(self, node: cst.Set, env: Env) -> Value:
        for element in node.elements:
            self._eval(element.value, env)
        return OTHER

    def _dict(self, node: cst.Dict, env: Env) -> Value:
        for element in node.elements:
            if isinstance(element, cst.DictElement):
                self._eval(element.key, env)
            self._eval(element.value, env)
        return OTHER

    def _name(self, node: cst.Name, env: Env) -> Value:
        if node.value in ("None", "True", "False"):
            return OTHER
        value = env.lookup(node.value)
        write = env.flow.stale.pop(node.value, None)
        if write is not None:
            self._emit(StaleRead(write.node, write.stmt, write, node.value, node, value,
                                 self._rewriting))
        return value

    def _attribute(self, node: cst.Attribute, env: Env) -> Value:
        key = _attr_key(node)
        if key is not None and key in env.names:
            write = env.flow.stale.pop(key, None)
            if write is not None:
                self._emit(StaleRead(write.node, write.stmt, write, key, node, env.names[key],
                                     self._rewriting))
            self._eval(node.value, env)
            return env.names[key]
        base = self._eval(node.value, env)
        attr = node.attr.value
        if base.kind is Kind.REF:
            qualname = f"{base.qualname}.{attr}"
            self._emit(Reference(node, self._stmt, qualname))
            return Value(Kind.REF, qualname=qualname, origin=node)
        if base.module is not None and base.module.cls is not None:
            value = base.module.cls.attr(f"self.{attr}")
            if value is not None:
                return value
            return UNKNOWN
        if base.kind is Kind.TENSOR:
            op = ops.lookup(f"torch.Tensor.{attr}")
            if op is None or op.returns != "tensor":
                return OTHER if attr in ("shape", "dtype", "device", "ndim") else UNKNOWN
            if op.kind == "detached_alias":  # .data: same storage, its own version counter
                return Value(Kind.TENSOR, derived=(attr, base), origin=node, storage=base.storage,
                             counter=("data", id(node)), requires_grad=False, via="data")
            if op.kind == "view":
                return self._view(base, node, op)
            if op.kind == "reference":  # .grad
                return Value(Kind.TENSOR, derived=(attr, base), origin=node, requires_grad=False)
            return Value(Kind.TENSOR, derived=(attr, base), origin=node)
        return UNKNOWN

    def _view(self, base: Value, node, op: ops.Op | None, dims: tuple | None = None) -> Value:
        detach = op is not None and _short(op.name) == "detach"
        noncontiguous = op is not None and op.noncontiguous
        return Value(
            Kind.TENSOR, origin=node, storage=base.storage, counter=base.counter,
            requires_grad=False if detach else base.requires_grad,
            via="detach" if detach else (base.via or "view"),
            graph=frozenset() if detach else base.graph,
            derived=("detach", base) if detach else None,
            contiguous=False if noncontiguous else (base.contiguous if detach else None),
            layout_origin=node if noncontiguous else (base.layout_origin if detach else None),
            layout_op=(_short(op.name), dims) if noncontiguous else (
                base.layout_op if detach else None),
            expanded=base.expanded or (op is not None and _overlapping_view(op)),
            view_origin=base.view_origin if detach else node,
        )

    def _call(self, node: cst.Call, env: Env) -> Value:
        func = node.func
        receiver = None
        receiver_node = None
        qualname = None
        callee = None
        if isinstance(func, cst.Attribute):
            attr = func.attr.value
            method = ops.method(attr) if attr.endswith("_") else None
            owner = self._eval_target(func.value, env) if method is not None and \
                method.kind == "inplace" else self._eval(func.value, env)
            if owner.kind is Kind.REF:
                qualname = f"{owner.qualname}.{attr}"
                self._emit(Reference(func, self._stmt, qualname))
            elif owner.is_tensor_like:
                receiver, receiver_node = owner, func.value
                prefix = "torch.Tensor" if owner.kind is Kind.TENSOR else "torch.UntypedStorage"
                qualname = f"{prefix}.{attr}"
            elif owner.kind is Kind.NDARRAY:
                receiver, receiver_node = owner, func.value
                qualname = f"numpy.ndarray.{attr}"
            elif owner.kind is Kind.OTHER and attr == "copy" and owner.snapshot is not None:
                # `state.copy()` of a state dict: a new dict of the same tensors.
                self._eval_args(node, env)
                return replace(owner, snapshot=node, origin=node)
            elif owner.kind in (Kind.MODULE, Kind.OPTIMIZER, Kind.PARAMS):
                receiver, receiver_node = owner, func.value
                key = _attr_key(func)
                callee = env.names.get(key) if key else None
                if callee is None and owner.module is not None and owner.module.cls is not None:
                    callee = owner.module.cls.attr(f"self.{attr}")
                    method = owner.module.cls.method(attr)
                    if callee is None and method is not None:
                        callee = Value(Kind.FUNCTION, qualname=attr, origin=method)
        else:
            callee = self._eval(func, env)
            if callee.kind is Kind.REF:
                qualname = callee.qualname
        args = [(arg, self._eval(arg.value, env)) for arg in node.args]
        result = self._call_result(node, qualname, callee, receiver, receiver_node, args, env)
        self._emit(Call(node, self._stmt, qualname, receiver, receiver_node, result))
        return result

    def _call_result(self, node, qualname, callee, receiver, receiver_node, args, env) -> Value:
        positional = [value for arg, value in args if arg.keyword is None and not arg.star]
        keywords = {arg.keyword.value: (value, arg.value) for arg, value in args
                    if arg.keyword is not None}
        if callee is not None and callee.kind is Kind.MODULE:
            return self._call_module(callee, node, positional, args, env)
        if callee is not None and callee.kind is Kind.CLASS and callee.module is not None:
            return self._construct_local_module(callee, node)
        if callee is not None and callee.kind is Kind.FUNCTION:
            return self._call_function(callee, receiver, node, args, env)
        if receiver is not None and receiver.kind is Kind.MODULE and qualname is None:
            return self._module_method(receiver, node, args, env)
        if receiver is not None and receiver.kind is Kind.OPTIMIZER:
            attr = node.func.attr.value
            op = ops.lookup(f"torch.optim.Optimizer.{attr}")
            if op is not None and op.kind == "optimizer_step" and "params" in op.writes:
                self._optimizer_step(receiver, node, env)
            return UNKNOWN
        if qualname is None:
            self._unknown_call(args, env)
            return UNKNOWN
        method = qualname.rpartition(".")[2]
        if receiver is not None and receiver.kind is Kind.NDARRAY:
            if method in _NDARRAY_WRITERS or "out" in keywords and keywords["out"][0] is receiver:
                self._write(receiver, receiver_node, node, None, env)
            return UNKNOWN
        if receiver is not None and receiver.kind is not Kind.TENSOR:
            # Methods of storages: nothing here returns a tensor.
            return Value(Kind.OTHER, derived=(method, receiver), origin=node)
        if receiver is not None:
            if method in _STORAGE_METHODS:
                return Value(_STORAGE_METHODS[method], derived=(method, receiver), origin=node)
            if method in _SCALAR_METHODS:
                return Value(Kind.OTHER, derived=(method, receiver), origin=node)
            if method == "requires_grad_":
                flag = positional[0] if positional else keywords.get("requires_grad", (None,))[0]
                on = flag is None or flag is OTHER
                return replace(receiver, requires_grad=True if on else None, origin=node)
        if qualname == "builtins.id" and len(positional) == 1:
            return Value(Kind.OTHER, derived=("id", positional[0]), origin=node)
        container = self._builtin_container(qualname, positional, node)
        if container is not None:
            return container
        if qualname == "torch.tensor":  # always copies its data
            token = ("alloc", id(node))
            flag = keywords.get("requires_grad", (None, None))[1]
            return Value(Kind.TENSOR, origin=node, storage=token, counter=token,
                         requires_grad=_is_literal(flag, _TRUE), leaf=_is_literal(flag, _TRUE),
                         contiguous=True)
        if qualname.startswith("numpy.") and "out" in keywords \
                and keywords["out"][0].kind is Kind.NDARRAY:
            self._write(keywords["out"][0], keywords["out"][1], node, None, env, fill=True)
            return keywords["out"][0]
        if qualname in _TENSOR_TYPES:
            data = positional[0] if positional else UNKNOWN
            if qualname in _PARAMETER_TYPES:
                no_grad = "requires_grad" in keywords and _is_literal(
                    keywords["requires_grad"][1], _FALSE)
                token = ("alloc", id(node))
                return Value(Kind.TENSOR, origin=node, storage=token, counter=token,
                             requires_grad=not no_grad, leaf=True)
            return Value(Kind.TENSOR, origin=node, storage=data.storage, counter=data.counter)
        module_spec = ops.module(qualname)
        if module_spec is not None:
            return self._construct_module(module_spec, qualname, node, positional, keywords)
        if _is_nn_class(qualname) and ops.lookup(qualname) is None:
            label = f"`{qualname.removeprefix('torch.')}()`"
            return Value(Kind.MODULE, origin=node, module=ModuleInfo(label=label))
        if qualname.startswith("torch.optim.") and positional and \
                positional[0].kind is Kind.PARAMS:
            return Value(Kind.OPTIMIZER, origin=node, params=positional[0].params)
        op = ops.lookup(qualname)
        if op is None:
            return UNKNOWN
        return self._apply(op, qualname, receiver, receiver_node, args, node, env)

    def _apply(self, op: ops.Op, qualname: str, receiver, receiver_node, args, node,
               env: Env) -> Value:
        kind = op.kind
        if kind == "grad_mode":
            return self._grad_mode(op, args)
        if kind == "backward":
            self._backward(op, receiver, args, node, env)
            return UNKNOWN if op.returns != "none" else OTHER
        bound, nodes = _bind_arguments(op, receiver, receiver_node, args)
        inplace_flag = op.inplace_kwarg and _is_literal(nodes.get(op.inplace_kwarg), _TRUE)
        if inplace_flag:
            twin = op.twin_op() or ops.lookup(f"torch.{op.twin}") if op.twin else None
            first = op.params[0] if op.params else None
            target = bound.get(first) if first else None
            if target is not None and target.kind is Kind.TENSOR:
                result = self._write(target, nodes.get(first), node, None, env,
                                     activation=True)
                return self._record_saves(twin or op, bound, result, node, env, nodes)
        if kind == "inplace":
            if op.metadata_only:
                # t_, unsqueeze_, detach_: no data is written, but most of them
                # bump the version counter, which a pending backward checks.
                target = bound.get("self") if receiver is not None else bound.get(
                    op.params[0] if op.params else "")
                if target is None or target.kind is not Kind.TENSOR:
                    return UNKNOWN
                if op.bumps_version:
                    self._dirty(target.storage, Write(
                        node, self._stmt, target, nodes.get("self"), None, target.via, False,
                        env.flow.grad), env)
                return target
            name = op.writes[0] if op.writes else None
            target = bound.get(name) if name else None
            if target is None or target.kind is not Kind.TENSOR:
                return UNKNOWN
            inputs = tuple((v, nodes.get(key)) for key, v in bound.items()
                           if key != name and v.kind in (Kind.TENSOR, Kind.NDARRAY))
            result = self._write(target, nodes.get(name), node, None, env,
                                 activation=_is_activation(op), fill=_is_fill(op),
                                 inputs=inputs)
            if op.returns == "none":
                return OTHER
            return self._record_saves(op, {**bound, name: result}, result, node, env, nodes)
        out = nodes.get("out")
        if out is not None and op.has_out:
            target = bound.get("out")
            if target is not None and target.kind is Kind.TENSOR:
                inputs = tuple((v, nodes.get(key)) for key, v in bound.items()
                               if key != "out" and v.kind is Kind.TENSOR)
                result = self._write(target, out, node, None, env, fill=True, inputs=inputs,
                                     region=_slice_region(out) if isinstance(
                                         out, cst.Subscript) and _slice_region(out) else None)
                return self._record_saves(op, bound, result, node, env, nodes)
            return UNKNOWN
        if kind == "numpy_share":
            return self._numpy_share(op, bound, nodes, node, env)
        if op.returns != "tensor":
            if op.returns == "tensors" and kind == "view":
                base = bound.get(op.aliases or "self")
                if base is not None and base.kind is Kind.TENSOR:
                    return Value(Kind.OTHER, origin=node, each=self._view(base, node, op))
            if op.returns == "tensors" or kind in ("numpy_share", "reference"):
                return UNKNOWN
            return OTHER if op.returns in ("none", "other") and kind == "functional" else UNKNOWN
        if kind == "view":
            base = bound.get(op.aliases or "self")
            if base is None or base.kind is not Kind.TENSOR:
                return Value(Kind.TENSOR, origin=node)
            if _short(op.name) == "view" and base.contiguous is False \
                    and not _dtype_view(args) and _view_fails(base.layout_op, args):
                self._emit(NonContiguousView(node, self._stmt, base, nodes.get("self")))
            return self._view(base, node, op, _literal_ints(args))
        if kind == "functional":
            token = ("alloc", id(node))
            inputs = [v for v in bound.values() if v.kind is Kind.TENSOR]
            requires = None
            if not inputs:
                flag = nodes.get("requires_grad")
                requires = _is_literal(flag, _TRUE) if flag is not None else False
                if flag is not None and not _is_literal(flag, _TRUE) and not _is_literal(
                        flag, _FALSE):
                    requires = None
            result = Value(Kind.TENSOR, origin=node, storage=token, counter=token,
                           requires_grad=requires, leaf=bool(requires) and not inputs,
                           contiguous=True if not inputs else None,
                           copied_at=node if inputs else None)
            if not inputs:
                return result
            return self._record_saves(op, bound, result, node, env, nodes)
        requires = self._requires_grad(list(bound.values()), env)
        if kind == "sometimes_alias":
            # The result is the source itself, a view of it, or a copy: which
            # one depends on the input (dtype, device, layout).
            source = bound.get(op.aliases or "self")
            token = ("alloc", id(node))
            # An explicit `.to(dtype)` / `.type(t)` is a conversion the code
            # usually guards by a dtype check: not treated as ambiguous.
            explicit = _short(op.name) in ("to", "type") and bool(args)
            return Value(Kind.TENSOR, origin=node, storage=token, counter=token,
                         requires_grad=requires,
                         maybe_of=source.storage if source is not None and not explicit
                         else None,
                         view_origin=node,
                         contiguous=True if _short(op.name) == "contiguous" else None)
        # Indexing and the rest: a tensor, its storage not proven.
        return Value(Kind.TENSOR, origin=node, requires_grad=requires)

    def _numpy_share(self, op: ops.Op, bound, nodes, node, env: Env) -> Value:
        """from_numpy / as_tensor / .numpy() / np.asarray: one buffer, two objects."""
        source_name = op.aliases or "self"
        source = bound.get(source_name, UNKNOWN)
        source_node = nodes.get(source_name)
        converts = any(key in nodes for key in ("dtype", "device"))
        copy_kwarg = op.extra.get("copy_kwarg")
        if copy_kwarg and not _is_literal(nodes.get(copy_kwarg), _FALSE):
            converts = True  # numpy.array copies unless told not to
        to_numpy = op.returns != "tensor"
        if converts:
            return UNKNOWN
        if to_numpy:
            if source.kind is not Kind.TENSOR or source.storage is None:
                return UNKNOWN
            return Value(Kind.NDARRAY, origin=node, storage=source.storage, view_origin=node)
        if source.kind is Kind.TENSOR:
            return source  # as_tensor(t) with nothing to convert is t itself
        if source.kind is Kind.UNKNOWN and isinstance(source_node, cst.Name) \
                and _short(op.name) == "torch.from_numpy":
            # from_numpy accepts only an ndarray: the name holds one from here on.
            source = Value(Kind.NDARRAY, origin=source_node,
                           storage=("alloc", id(source_node)))
            self._assign_name(source_node.value, source, env)
        if source.kind is not Kind.NDARRAY or source.storage is None:
            return Value(Kind.TENSOR, origin=node, requires_grad=False)
        return Value(Kind.TENSOR, origin=node, storage=source.storage,
                     counter=("alloc", id(node)), requires_grad=False, view_origin=node)

    def _builtin_container(self, qualname: str, positional, node) -> Value | None:
        """Containers that repeat one object, and copies that share their tensors."""
        if qualname in ("builtins.dict.fromkeys", "itertools.repeat"):
            item = positional[1] if qualname.endswith("fromkeys") and len(positional) > 1 \
                else positional[0] if qualname.endswith("repeat") and positional else None
            if item is not None and item.kind is Kind.TENSOR:
                return Value(Kind.OTHER, origin=node, each=item, replicated=node)
            return None
        if qualname in ("builtins.list", "builtins.tuple", "builtins.dict", "copy.copy") \
                and len(positional) == 1:
            source = positional[0]
            if source.kind is Kind.PARAMS:
                return Value(Kind.OTHER, origin=node, params=source.params, snapshot=node)
            if source.snapshot is not None:
                return replace(source, snapshot=node, origin=node)
            if source.each is not None:
                return replace(source, origin=node)
        return None

    def _grad_mode(self, op: ops.Op, args) -> Value:
        enabled = op.extra.get("grad_enabled")
        if enabled is None and args:
            # set_grad_enabled(flag) / inference_mode(mode): a literal says which.
            node = args[0][0].value
            enabled = True if _is_literal(node, _TRUE) else False if _is_literal(
                node, _FALSE) else None
            if op.extra.get("mode_arg") and enabled is not None:
                enabled = not enabled  # inference_mode(True) disables grad
        elif enabled is False and args and op.extra.get("mode_arg"):
            node = args[0][0].value
            enabled = False if not _is_literal(node, _FALSE) else True
        return Value(Kind.GRAD_MODE, derived=(enabled, OTHER))

    def _backward(self, op: ops.Op, receiver, args, node, env: Env) -> None:
        retain_kwarg = op.extra.get("retain_kwarg", "retain_graph")
        retain = False
        targets = []
        if receiver is not None:
            targets.append(receiver)
        elif args:
            targets.append(args[0][1])
        for arg, value in args:
            if arg.keyword is not None and arg.keyword.value in (retain_kwarg, "create_graph"):
                retain = retain or not _is_literal(arg.value, _FALSE)
        for target in targets:
            if target.kind is Kind.TENSOR:
                self._consume(target, node, None, env, retain=retain)

    def _optimizer_step(self, optimizer: Value, node, env: Env) -> None:
        self._write_parameters(optimizer.params, node, env)

    def _write_parameters(self, tokens: frozenset, node, env: Env) -> None:
        """optimizer.step(), load_state_dict(): every parameter written in place."""
        write = Write(node, self._stmt, None, None, None, None, False, env.flow.grad)
        for token in tokens:
            self._dirty(token, write, env)
        self._mark_stale(set(tokens), write, set(), env)

    def _unknown_call(self, args, env: Env) -> None:
        # An unknown function given a tensor may run its backward: forget the
        # hazards of that graph rather than report them later.
        for _, value in args:
            if value.kind is Kind.TENSOR and value.graph:
                env.flow.dirty = tuple(d for d in env.flow.dirty if d[1].id not in value.graph)

    # -- modules --------------------------------------------------------------

    def _construct_module(self, spec: ops.ModuleOp, qualname: str, node, positional,
                          keywords) -> Value:
        short = qualname.removeprefix("torch.nn.modules.").removeprefix("torch.")
        inplace = False
        if spec.inplace_kwarg:
            flag = keywords.get(spec.inplace_kwarg, (None, None))[1]
            index = getattr(spec, "inplace_index", None)
            if flag is None and index is not None and len(node.args) > index \
                    and node.args[index].keyword is None:
                flag = node.args[index].value
            inplace = _is_literal(flag, _TRUE)
        children = None
        params: frozenset = frozenset()
        if spec.container:
            if all(v.kind is Kind.MODULE for v in positional) and "ModuleDict" not in qualname:
                children = tuple(positional)
                if len(positional) == 1 and "List" in qualname:
                    children = None
            for child in positional:
                if child.kind is Kind.MODULE and child.module is not None:
                    params |= child.module.params
        elif _has_params(spec):
            params = frozenset({("params", id(node))})
        label = f"`{short}(inplace=True)`" if inplace else f"`{short}()`"
        info = ModuleInfo(spec=spec, inplace=inplace, children=children, params=params,
                          label=label)
        return Value(Kind.MODULE, origin=node, module=info)

    def _construct_local_module(self, cls_value: Value, node) -> Value:
        cls = cls_value.module.cls if cls_value.module is not None else None
        if cls is None:
            return UNKNOWN
        token = ("instance", id(node))
        info = ModuleInfo(cls=cls, params=frozenset({token}), label=f"`{cls.name}`")
        return Value(Kind.MODULE, origin=node, module=info)

    def _module_method(self, module: Value, node, args, env: Env) -> Value:
        attr = node.func.attr.value
        info = module.module
        if attr in _PARAMETER_METHODS and info is not None and info.params:
            return Value(Kind.PARAMS, origin=node, params=info.params)
        op = ops.lookup(f"torch.nn.Module.{attr}")
        if op is not None and op.kind == "reference" and info is not None and info.params:
            # state_dict(): the module's own tensors, not copies.
            return Value(Kind.OTHER, origin=node, params=info.params, snapshot=node)
        if attr == "load_state_dict" and info is not None and info.params:
            self._write_parameters(info.params, node, env)
            return UNKNOWN
        if info is not None and info.cls is not None and info.cls.method(attr) is not None:
            return UNKNOWN
        self._unknown_call(args, env)
        return UNKNOWN

    def _call_module(self, module: Value, node, positional, args, env: Env) -> Value:
        info = module.module
        if info is None or not positional or len(positional) != len(args):
            return UNKNOWN
        arg_node = args[0][0].value
        if info.cls is None and info.spec is not None and len(positional) != 1:
            return UNKNOWN
        return self._run_module(module, positional, arg_node, node, env)

    def _run_module(self, module: Value, inputs: list[Value], arg_node, node,
                    env: Env) -> Value:
        """Call ``module`` on ``inputs``; ``arg_node`` is the first argument's expression."""
        info = module.module
        x = inputs[0]
        if info.children is not None:
            value = x
            for child in info.children:
                if child.module is None:
                    return UNKNOWN
                value = self._run_module(child, [value], arg_node, node, env)
                arg_node = None
            return value
        if info.cls is not None:
            return self._call_local_module(module, inputs, arg_node, node, env)
        tensors = [v for v in inputs if v.kind is Kind.TENSOR]
        graph = frozenset().union(*(v.graph for v in tensors)) if tensors else frozenset()
        spec = info.spec
        token = ("alloc", id(node), id(module.origin))
        fresh = Value(Kind.TENSOR, origin=node, storage=token, counter=token, graph=graph)
        if spec is None:
            # A torch.nn class the tables do not describe: its output is a
            # differentiable function of its inputs, nothing more is known.
            if not tensors:
                return UNKNOWN
            return replace(fresh, requires_grad=True if any(
                v.requires_grad for v in tensors) else None)
        if x.kind is not Kind.TENSOR or spec.returns != "tensor":
            return UNKNOWN
        if spec.identity:
            return x
        params = self._parameter(info.params, module.origin) if info.params else None
        bound = {"input": x}
        if params is not None:
            bound["weight"] = params
        if info.inplace:
            result = self._write(x, arg_node, node, info.label, env, activation=True,
                                 defined_at=module.origin, visible=False)
            result = replace(result, graph=graph)
        else:
            result = fresh
        requires = self._requires_grad(list(bound.values()), env)
        result = replace(result, requires_grad=requires)
        # In place, the module runs the in-place op, whose saves may differ
        # (hardswish_ decomposes; its saves are unknown, so none are assumed).
        inplace_op = spec.inplace() if info.inplace else None
        saves = spec.saves if not info.inplace else (
            inplace_op.saves_must if inplace_op is not None else None)
        if requires is not True or not saves:
            return result
        new = set()
        for name in sorted(saves):
            if name == "result":
                saved = [self._new_save(result, node, info.label, "its result", env)]
            elif name == "input" and _input_saved("input", bound):
                saved = [self._new_save(x, node, info.label, "its input", env)]
            elif name == "weight" and params is not None and _input_saved("weight", bound):
                saved = [self._save(token, token, node, info.label, "its parameters", env)
                         for token in info.params]
            else:
                saved = []
            new.update(save.id for save in saved if save is not None)
        return replace(result, graph=result.graph | new)

    def _call_local_module(self, module: Value, inputs, arg_node, node, env: Env) -> Value:
        cls = module.module.cls
        forward = cls.method("forward")
        if forward is None:
            return UNKNOWN
        summary = self._summary(forward, cls, tuple(inputs))
        if summary is None:
            return UNKNOWN
        arg_nodes = [arg.value for arg in node.args] if isinstance(node, cst.Call) else []
        if len(arg_nodes) != len(inputs):
            arg_nodes = [arg_node] + [None] * (len(inputs) - 1)
        return self._apply_summary(summary, list(zip(inputs, arg_nodes)),
                                   self._param_mapping(cls, module.module.params), node,
                                   None, env, forward)

    @staticmethod
    def _param_mapping(cls: ClassInfo, params: frozenset) -> dict:
        """Parameter tokens seen inside a class's methods → the instance's tokens."""
        mapping = {cls.self_token: params}
        for token in cls.all_params():
            mapping[token] = params
        for base in cls.bases:
            mapping[base.self_token] = params
        return mapping

    def _call_function(self, function: Value, receiver, node, args, env: Env) -> Value:
        definition = function.origin
        if not isinstance(definition, cst.FunctionDef):
            return UNKNOWN
        positional = [(value, arg.value) for arg, value in args
                      if arg.keyword is None and not arg.star]
        if len(positional) != len(args):
            self._unknown_call(args, env)
            return UNKNOWN
        cls = receiver.module.cls if receiver is not None and receiver.module is not None \
            else None
        summary = self._summary(definition, cls, tuple(v for v, _ in positional))
        if summary is None:
            self._unknown_call(args, env)
            return UNKNOWN
        mapping = self._param_mapping(cls, receiver.module.params) if cls is not None else {}
        return self._apply_summary(summary, positional, mapping, node, None, env, definition)

    # -- summaries of functions defined in the file ---------------------------

    def _summary(self, function: cst.FunctionDef, cls: ClassInfo | None,
                 args: tuple[Value, ...]) -> _Summary | None:
        key = (id(function), id(cls), tuple(a.requires_grad if a.kind is Kind.TENSOR else a.kind
                                            for a in args))
        if key in self._summaries:
            return self._summaries[key]
        if key in self._in_progress or len(self._in_progress) > 8:
            return None
        self._in_progress.add(key)
        self._silent += 1
        outer_stmt = self._stmt
        try:
            summary = self._summarise(function, cls, args)
        finally:
            self._silent -= 1
            self._in_progress.discard(key)
            self._stmt = outer_stmt
        self._summaries[key] = summary
        return summary

    def _summarise(self, function: cst.FunctionDef, cls, args) -> _Summary | None:
        env = Env(self._outer_env(self._top))
        env.flow.grad = self._decorated_grad_mode(function, env)
        params = list(function.params.params)
        offset = 1 if cls is not None else 0
        if cls is not None and params:
            env.names[params[0].name.value] = self._self_value(cls)
        if len(params) - offset < len(args) or any(
                p.default is None for p in params[offset + len(args):]):
            return None
        for index, (param, value) in enumerate(zip(params[offset:], args)):
            if value.kind is Kind.TENSOR:
                value = Value(Kind.TENSOR, storage=("arg", index), counter=("arg", index),
                              requires_grad=value.requires_grad, origin=param)
            env.names[param.name.value] = value
        for param in params[offset + len(args):]:
            env.names[param.name.value] = UNKNOWN
        outer_log, self._write_log = self._write_log, []
        try:
            returns = self._run_body(function, env)
            log = self._write_log
        finally:
            self._write_log = outer_log
        if not returns:
            returns = [(OTHER, env.flow)]
        result, flow = returns[0][0], returns[0][1].copy()
        for value, other in returns[1:]:
            result = join(result, value)
            flow.merge(other)
        writes = {}
        for write in log:
            token = write.target.storage if write.target is not None else None
            if isinstance(token, tuple) and token[0] == "arg":
                writes.setdefault(token[1], write)
        saves = tuple((token, save) for token, pending in flow.saves.items() for save in pending)
        returns_arg = None
        if result.kind is Kind.TENSOR and isinstance(result.storage, tuple) \
                and result.storage[0] == "arg" and result.via is None:
            returns_arg = result.storage[1]
        return _Summary(result, writes, saves, returns_arg)

    def _apply_summary(self, summary: _Summary, args, mapping, node, label: str | None,
                       env: Env, function: cst.FunctionDef) -> Value:
        for index, write in summary.writes.items():
            if index < len(args) and args[index][0].kind is Kind.TENSOR:
                value, arg_node = args[index]
                self._write(value, arg_node, node, label, env, activation=write.activation,
                            defined_at=write.node, visible=False,
                            callee=function.name.value, declared=_declares_mutation(function))
        graph = frozenset().union(*(v.graph for v, _ in args if v.kind is Kind.TENSOR))
        result = summary.result
        if summary.returns_arg is not None and summary.returns_arg < len(args):
            result = args[summary.returns_arg][0]
        elif result.kind is Kind.TENSOR:
            token = ("alloc", id(node))
            result = Value(Kind.TENSOR, origin=node, storage=token, counter=token,
                           requires_grad=result.requires_grad)
        elif result.kind is not Kind.OTHER:
            return UNKNOWN
        new = set()
        for token, save in summary.saves:
            # A save the callee left pending, moved onto the caller's storages.
            moved: list[Save | None] = []
            if isinstance(token, tuple) and token[0] == "arg" and token[1] < len(args):
                value, arg_node = args[token[1]]
                moved.append(self._new_save(value, node, label, "its input", env, arg_node))
            elif token in mapping:
                moved.extend(self._save(t, t, node, label, "its parameters", env)
                             for t in mapping[token])
            elif summary.result.kind is Kind.TENSOR and token == summary.result.storage:
                moved.append(self._new_save(result, node, label, "its result", env))
            new.update(save.id for save in moved if save is not None)
        if result.kind is Kind.TENSOR:
            result = replace(result, graph=result.graph | graph | frozenset(new))
        return result

    # -- the rest of the expressions --------------------------------------------

    def _eval_args(self, node: cst.Call, env: Env) -> None:
        for arg in node.args:
            self._eval(arg.value, env)

    def _display(self, node, env: Env) -> Value:
        """A list or tuple display; `[t]` remembers its one element for `[t] * n`,
        and `a, b = x, y` binds element by element."""
        values = [self._eval(element.value, env) for element in node.elements]
        if any(isinstance(element, cst.StarredElement) for element in node.elements):
            return OTHER
        if len(values) == 1 and (values[0].kind is Kind.TENSOR or values[0].each is not None):
            return Value(Kind.OTHER, origin=node, each=values[0])
        return Value(Kind.OTHER, origin=node, items=tuple(values))

    def _comparison(self, node: cst.Comparison, env: Env) -> Value:
        left_node = node.left
        left = self._eval(left_node, env)
        any_tensor = False
        for target in node.comparisons:
            right = self._eval(target.comparator, env)
            operator = _COMPARE_OPS.get(type(target.operator), "?")
            self._emit(
                Compare(node, self._stmt, operator, left, right, left_node, target.comparator)
            )
            if operator not in _NON_TENSOR_COMPARE and Kind.TENSOR in (left.kind, right.kind):
                any_tensor = True
            left, left_node = right, target.comparator
        # Element-wise comparison of a tensor is a tensor (only when chained once:
        # `a < b < c` is `(a < b) and (b < c)`).
        if any_tensor and len(node.comparisons) == 1:
            token = ("alloc", id(node))
            return Value(Kind.TENSOR, origin=node, storage=token, counter=token,
                         requires_grad=False)
        return UNKNOWN

    def _binary(self, node: cst.BinaryOperation, env: Env) -> Value:
        left = self._eval(node.left, env)
        right = self._eval(node.right, env)
        if isinstance(node.operator, cst.Multiply) and Kind.TENSOR not in (left.kind, right.kind):
            # `[t] * n` / `n * [t]`: n references to one object.
            for container, count in ((left, node.right), (right, node.left)):
                if container.each is not None and isinstance(count, (cst.Name, cst.Integer,
                                                                     cst.Attribute, cst.Call)):
                    return replace(container, replicated=node, origin=node)
        if Kind.TENSOR not in (left.kind, right.kind):
            if left.kind is Kind.OTHER and right.kind is Kind.OTHER:
                return OTHER
            return UNKNOWN
        token = ("alloc", id(node))
        result = Value(Kind.TENSOR, origin=node, storage=token, counter=token)
        dunder = _BINARY_DUNDERS.get(type(node.operator))
        op = ops.method(f"__{dunder}__") if dunder else None
        if op is None:
            return replace(result, requires_grad=self._requires_grad([left, right], env))
        if left.kind is Kind.TENSOR:
            bound, nodes = {"self": left, "other": right}, {"self": node.left, "other": node.right}
        else:  # `2 * x` runs x.__rmul__(2)
            bound, nodes = {"self": right, "other": left}, {"self": node.right, "other": node.left}
        return self._record_saves(op, bound, result, node, env, nodes)

    def _unary(self, node: cst.UnaryOperation, env: Env) -> Value:
        operand = self._eval(node.expression, env)
        if isinstance(node.operator, cst.Not):
            return OTHER
        if operand.kind is not Kind.TENSOR:
            return UNKNOWN
        token = ("alloc", id(node))
        return Value(Kind.TENSOR, origin=node, storage=token, counter=token,
                     requires_grad=operand.requires_grad, graph=operand.graph)

    def _subscript(self, node: cst.Subscript, env: Env) -> Value:
        base = self._eval(node.value, env)
        self._slices(node, env)
        if base.kind is not Kind.TENSOR:
            if base.each is not None:
                # An element of a tuple/list: with `[t] * n`, every element is `t`.
                return replace(base.each, replica=base.replicated or base.each.replica)
            return UNKNOWN
        if _basic_index(node):
            view = self._view(base, node, None)
            region = _slice_region(node)
            return replace(view, region=region) if region is not None and base.region is None \
                and base.via is None else view
        if self._advanced_index(node, env):
            token = ("alloc", id(node))
            return Value(Kind.TENSOR, origin=node, storage=token, counter=token,
                         requires_grad=base.requires_grad, graph=base.graph, copied_at=node)
        return Value(Kind.TENSOR, origin=node, requires_grad=base.requires_grad, graph=base.graph)

    def _advanced_index(self, node: cst.Subscript, env: Env) -> bool:
        """Indexing with a list, a tensor or a mask: always a copy."""
        for element in node.slice:
            index = element.slice
            if isinstance(index, cst.Index):
                value = index.value
                if isinstance(value, (cst.List, cst.Comparison)):
                    return True
                if self._index_values.get(id(value), UNKNOWN).kind is Kind.TENSOR:
                    return True
        return False

    def _slices(self, node: cst.Subscript, env: Env) -> None:
        for element in node.slice:
            index = element.slice
            if isinstance(index, cst.Index):
                self._index_values[id(index.value)] = self._eval(index.value, env)
            else:
                for bound in (index.lower, index.upper, index.step):
                    if bound is not None:
                        self._eval(bound, env)

    def _if_exp(self, node: cst.IfExp, env: Env) -> Value:
        self._eval(node.test, env)
        return join(self._eval(node.body, env), self._eval(node.orelse, env))

    def _named_expr(self, node: cst.NamedExpr, env: Env) -> Value:
        value = self._eval(node.value, env)
        self._bind(node.target, value, env)
        return value

    def _lambda(self, node: cst.Lambda, env: Env) -> Value:
        inner = Env(env, flow=env.flow.copy())
        for param in _all_params(node.params):
            if param.default is not None:
                self._eval(param.default, env)
            inner.names[param.name.value] = UNKNOWN
        self._eval_silently(node.body, inner)
        return OTHER

    def _comprehension(self, node, env: Env) -> Value:
        # The first iterable runs in the enclosing scope; targets, later
        # iterables, conditions and the element run in the comprehension's own.
        inner = Env(env, flow=env.flow)
        clause = node.for_in
        scope = env
        while clause is not None:
            iterable = self._eval(clause.iter, scope)
            self._bind(clause.target, self._element_of(iterable, clause), inner)
            for condition in clause.ifs:
                self._eval(condition.test, inner)
            clause, scope = clause.inner_for_in, inner
        if isinstance(node, cst.DictComp):
            self._eval(node.key, inner)
            self._eval(node.value, inner)
        else:
            self._eval(node.elt, inner)
        return OTHER if not isinstance(node, cst.GeneratorExp) else UNKNOWN

    def _annotation(self, annotation: cst.Annotation, env: Env) -> Value:
        declared = self._eval(annotation.annotation, env)
        if declared.kind is Kind.REF and declared.qualname in _TENSOR_TYPES:
            return Value(Kind.TENSOR, origin=annotation)
        return UNKNOWN


# ---------------------------------------------------------------------------
# Small helpers over op tables and libcst nodes.


def _short(qualname: str) -> str:
    for prefix in ("torch.Tensor.", "torch.nn.functional.", "torch.nn."):
        if qualname.startswith(prefix):
            return qualname[len(prefix):]
    return qualname


def _is_activation(op: ops.Op) -> bool:
    return _short(op.name) in _activation_names()


@cache
def _activation_names() -> frozenset[str]:
    """In-place ops a module's or function's `inplace=True` turns into (relu_, elu_, …)."""
    names = set()
    for name in ops.names("modules"):
        spec = ops.module(name)
        if spec is not None and spec.inplace_op:
            names.add(spec.inplace_op)
    for name in ops.names("ops"):
        if name.startswith("torch.nn.functional."):
            op = ops.lookup(name)
            if op is not None and op.inplace_kwarg and op.twin:
                names.add(op.twin)
    return frozenset(names)


def _is_nn_class(qualname: str) -> bool:
    """`torch.nn.BCELoss`, `torch.nn.modules.loss.MSELoss`: a class of torch.nn."""
    head, _, last = qualname.rpartition(".")
    return (head == "torch.nn" or head.startswith("torch.nn.modules")) and last[:1].isupper()


def _has_params(spec: ops.ModuleOp) -> bool:
    explicit = getattr(spec, "has_params", None)
    if explicit is not None:
        return bool(explicit)
    return bool(spec.opaque or (spec.saves and {"weight", "bias"} & set(spec.saves)))


def _chosen_saves(op: ops.Op, bound: dict[str, Value]) -> frozenset:
    """What ``op``'s backward saves for these arguments: the overloads the
    argument kinds allow, and only what all of them save."""
    if op.saves_must == op.saves_may or not op.overloads:
        return op.saves_must or frozenset()
    candidates = []
    for overload in op.overloads.values():
        if overload.saves is None:
            return op.saves_must or frozenset()
        other = bound.get("other")
        if other is not None and other.kind is Kind.TENSOR and "Scalar" in overload.name:
            continue
        if other is not None and other.kind is Kind.OTHER and overload.name == "Tensor":
            continue
        candidates.append(overload.saves)
    if not candidates:
        return op.saves_must or frozenset()
    return frozenset.intersection(*candidates)


def _input_saved(name: str, bound: dict[str, Value]) -> bool:
    """Autograd keeps an input only when a gradient formula that reads it runs:
    proven when another tensor input requires grad, or for an op's only input."""
    tensors = {key: v for key, v in bound.items() if v.kind is Kind.TENSOR}
    if name not in tensors:
        return False
    others = [v for key, v in tensors.items() if key != name]
    if not others:
        return tensors[name].requires_grad is True
    return any(v.requires_grad is True for v in others)


def _bind_arguments(op: ops.Op, receiver, receiver_node, args):
    """Argument values and nodes by parameter name, as the op's signature names them."""
    bound: dict[str, Value] = {}
    nodes: dict[str, cst.CSTNode] = {}
    if receiver is not None:
        bound["self"], nodes["self"] = receiver, receiver_node
    position = 0
    for arg, value in args:
        if arg.star:
            continue
        if arg.keyword is not None:
            bound[arg.keyword.value], nodes[arg.keyword.value] = value, arg.value
        elif position < len(op.params):
            name = op.params[position]
            bound[name], nodes[name] = value, arg.value
            position += 1
    return bound, nodes


def _basic_index(node: cst.Subscript) -> bool:
    """Basic indexing (ints, slices, None, ...) gives a view; anything else may copy."""
    for element in node.slice:
        index = element.slice
        if isinstance(index, cst.Slice):
            continue
        value = index.value
        if isinstance(value, (cst.Integer, cst.Ellipsis)) or _is_literal(value, "None"):
            continue
        if isinstance(value, cst.UnaryOperation) and isinstance(value.expression, cst.Integer):
            continue
        return False
    return True


def _attr_key(node) -> str | None:
    """`self.h` → "self.h": attributes of `self` are tracked like names."""
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) \
            and node.value.value == "self":
        return f"self.{node.attr.value}"
    return None


# Views whose elements may share one memory location (stride 0).  The tables
# mark non-contiguous views; only these also overlap themselves.
_SELF_OVERLAPPING = frozenset({"expand", "expand_as", "broadcast_to"})
# In-place ops that overwrite the destination whatever it held: writing
# through a view with them fills a buffer, which is what views are for.
_FILLS = frozenset({"copy_", "fill_", "zero_"})
# NumPy's in-place ndarray methods.
_NDARRAY_WRITERS = frozenset({"fill", "sort", "put", "partition", "resize", "itemset",
                              "byteswap", "setfield"})


def _overlapping_view(op: ops.Op) -> bool:
    return _short(op.name) in _SELF_OVERLAPPING


def _is_fill(op: ops.Op) -> bool:
    return _short(op.name) in _FILLS


def _dtype_view(args) -> bool:
    """`t.view(torch.float16)` / `t.view(dtype=...)` reinterprets, it does not reshape."""
    for arg, value in args:
        if arg.keyword is not None and arg.keyword.value == "dtype":
            return True
        if value.kind is Kind.REF:
            return True
    return False


# Views that reorder dimensions.  After one of them, merging dimensions with
# `.view()` fails unless the merged ones stayed adjacent and in order; the
# tables say which views are non-contiguous, not which reorder.
_REORDERING = frozenset({"transpose", "swapaxes", "swapdims", "t", "T", "mT", "mH", "H",
                         "permute", "movedim", "moveaxis"})
_EXPANDING = frozenset({"expand", "expand_as", "broadcast_to"})


def _literal_ints(args) -> tuple | None:
    """`transpose(1, 2)` → (1, 2); None when an argument is not an integer literal."""
    values = []
    for arg, _ in args:
        node = arg.value
        sign = 1
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            node, sign = node.expression, -1
        if arg.keyword is not None or not isinstance(node, cst.Integer):
            return None
        values.append(sign * int(node.value, 0))
    return tuple(values)


def _view_fails(layout_op: tuple | None, args) -> bool:
    """Does `.view(*args)` certainly fail on a tensor ``layout_op`` made non-contiguous?

    Splitting a dimension works on any layout; merging needs the merged
    dimensions adjacent and in order in memory.  Reported: flattening
    (`view(-1)`, `view(n)`, `view(b, -1)`) or merging the last sizes
    (`view(b, t, h * d)`) after a transpose or permute with literal dims that
    moves a dimension other than the first two; and flattening an expanded
    tensor.  A transpose of dims 0 and 1 (or `.t()`, `.T`) is not judged:
    merging the dims behind them works, and size-1 dims (one channel, a batch
    of one) make many of those views legal.
    """
    if layout_op is None:
        return False
    name, dims = layout_op
    positional = [arg.value for arg, _ in args if arg.keyword is None and not arg.star]
    if len(positional) != len(args) or not positional:
        return False
    flatten_all = len(positional) == 1 and not isinstance(positional[0], (cst.Tuple, cst.List))
    if name in _EXPANDING:
        return flatten_all
    if name not in _REORDERING or not dims:
        return False
    if name in ("transpose", "swapaxes", "swapdims"):
        moved = set(dims)
    elif name == "permute":
        moved = {d for position, d in enumerate(dims) if d != position}
    else:
        return False
    if moved <= {0, 1}:
        return False
    last = positional[-1]
    flatten_rest = len(positional) == 2 and isinstance(last, cst.UnaryOperation) and \
        isinstance(last.operator, cst.Minus) and isinstance(last.expression, cst.Integer) \
        and last.expression.value == "1"
    merged_last = isinstance(last, cst.BinaryOperation) and isinstance(
        last.operator, cst.Multiply)
    return flatten_all or flatten_rest or merged_last


def _subscript_index_value(node: cst.Subscript, values: dict) -> Value | None:
    if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        value = values.get(id(node.slice[0].slice.value))
        if value is not None and value.kind in (Kind.TENSOR, Kind.NDARRAY):
            return value
    return None


def _bound(node) -> tuple[int, int] | None:
    """A slice bound as (k, c), meaning k·n + c for a dim of unknown size n."""
    if node is None:
        return None
    if isinstance(node, cst.Integer):
        return (0, int(node.value, 0))
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) \
            and isinstance(node.expression, cst.Integer):
        return (1, -int(node.expression.value, 0))
    raise ValueError


def _slice_region(node) -> tuple | None:
    """The part of dim 0 a subscript `x[a:b]` covers, as ((k, c), (k, c)) bounds;
    None when it is not one step-1 slice with literal (or absent) bounds."""
    if not isinstance(node, cst.Subscript) or len(node.slice) != 1:
        return None
    index = node.slice[0].slice
    if not isinstance(index, cst.Slice) or index.step is not None:
        return None
    try:
        lower = _bound(index.lower) or (0, 0)
        upper = _bound(index.upper) or (1, 0)
    except ValueError:
        return None
    return (lower, upper)


def regions_overlap(a: tuple | None, b: tuple | None) -> bool | None:
    """Do two dim-0 regions overlap for every large enough size?  None: not known.

    A region of None is the whole dimension.  Bounds compare as n grows, so
    `x[1:]` and `x[:-1]` overlap and `x[:2]` and `x[2:]` do not.
    """
    whole = ((0, 0), (1, 0))
    a, b = a or whole, b or whole
    return max(a[0], b[0]) < min(a[1], b[1])


def _is_alias_expression(node) -> bool:
    """`w`, `self.w`, `w.data`, `w.detach()`: another name for the same memory."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and not node.args \
            and node.func.attr.value == "detach":
        node = node.func.value
    elif isinstance(node, cst.Attribute) and node.attr.value == "data":
        node = node.value
    return isinstance(node, cst.Name) or _attr_key(node) is not None


def _declares_mutation(function: cst.FunctionDef) -> bool:
    """A trailing `_` or "in place" in the docstring: the function says it writes."""
    if function.name.value.endswith("_"):
        return True
    if any(param.name.value in ("inplace", "in_place") for param in _all_params(function.params)):
        return True
    doc = (function.get_docstring() or "").lower()
    return "in place" in doc or "in-place" in doc or "inplace" in doc


def _refers_to(value: Value, tokens: set) -> bool:
    """Does ``value`` reach any of these storages (itself, or holding them)?"""
    if value.storage in tokens or value.maybe_of in tokens:
        return True
    if value.params and not value.params.isdisjoint(tokens):
        return True
    module = value.module
    return module is not None and bool(module.params) and not module.params.isdisjoint(tokens)


def discards(stmt, node) -> bool:
    """Is ``node`` a whole expression statement (its result thrown away)?"""
    return (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Expr) and stmt.body[0].value is node)


def _names_of(node) -> set[str]:
    if isinstance(node, cst.Name):
        return {node.value}
    key = _attr_key(node)
    return {key} if key else set()


def _names_assigned_by(stmt) -> set[str]:
    """Names that receive a statement's result: its assignment targets."""
    names: set[str] = set()
    if isinstance(stmt, cst.SimpleStatementLine):
        for small in stmt.body:
            targets = []
            if isinstance(small, cst.Assign):
                targets = [t.target for t in small.targets]
            elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                targets = [small.target]
            for target in targets:
                names |= _names_of(target)
    return names


def _dotted(node) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def _alias_name(alias: cst.ImportAlias) -> str:
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    return _dotted(alias.name).split(".")[0]


def _all_params(params: cst.Parameters) -> list[cst.Param]:
    result = list(params.posonly_params) + list(params.params)
    if isinstance(params.star_arg, cst.Param):
        result.append(params.star_arg)
    result.extend(params.kwonly_params)
    if params.star_kwarg is not None:
        result.append(params.star_kwarg)
    return result


def _child_expressions(node: cst.CSTNode) -> Iterator[cst.BaseExpression]:
    """The nearest expressions below ``node`` (not below those expressions)."""
    for child in node.children:
        if isinstance(child, cst.BaseExpression):
            yield child
        elif not isinstance(child, (cst.BaseSuite, cst.BaseStatement)):
            yield from _child_expressions(child)


def _expressions_in(node: cst.CSTNode) -> Iterator[cst.BaseExpression]:
    for child in node.children:
        if isinstance(child, cst.BaseExpression):
            yield child
        else:
            yield from _expressions_in(child)


def _names_bound_in(node: cst.CSTNode) -> Iterator[str]:
    for child in node.children:
        if isinstance(child, (cst.AssignTarget, cst.AsName, cst.MatchAs, cst.MatchStar)):
            for sub in _walk(child):
                if isinstance(sub, cst.Name):
                    yield sub.value
        else:
            yield from _names_bound_in(child)


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    yield node
    for child in node.children:
        yield from _walk(child)


def analyse(module: cst.Module) -> Analysis:
    return Analysis(module).run()
