"""Every rule as a small function over the analysis' events, registered by code.

A check receives one event and a ``Context`` and yields ``Finding``s.  It
reads facts the interpreter proved; it never walks the tree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterator

import libcst as cst

from libcst.metadata import MetadataWrapper, PositionProvider

from aliaslint.analysis import (
    Call,
    Compare,
    Event,
    InplaceWrite,
    Kind,
    Reference,
    SavedWrite,
    StaleRead,
    Value,
    Write,
)


@dataclass(frozen=True)
class Finding:
    code: str
    node: cst.CSTNode
    stmt: cst.CSTNode
    message: str
    related: tuple[tuple[str, cst.CSTNode], ...] = ()


class Context:
    """What a check may ask about the module beyond the event itself."""

    def __init__(self, module: cst.Module):
        self.module = module
        self._positions = None

    @property
    def positions(self):
        """Node → CodeRange, computed on first use: only files with findings pay for it."""
        if self._positions is None:
            wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
            self._positions = wrapper.resolve(PositionProvider)
        return self._positions

    def line(self, node: cst.CSTNode) -> int:
        return self.positions[node].start.line

    def source(self, node: cst.CSTNode) -> str:
        """The node's source text on one line, for messages."""
        text = self.module.code_for_node(node).strip()
        return " ".join(text.split())


CheckFn = Callable[[Event, Context], Iterator[Finding]]


@dataclass(frozen=True)
class Check:
    code: str
    event: type
    run: CheckFn


# A code may have several checks, one per kind of event it reads.
CHECKS: list[Check] = []


def check(code: str, event: type):
    def register(fn: CheckFn) -> CheckFn:
        CHECKS.append(Check(code, event, fn))
        return fn

    return register


# ---------------------------------------------------------------------------
# AL4xx: code that tests memory sharing the wrong way.

_SAME_STORAGE = "{a}.untyped_storage().data_ptr() == {b}.untyped_storage().data_ptr()"
_ADVICE = (
    "to test for one storage compare `" + _SAME_STORAGE + "`; for overlapping "
    "memory use `aliaslint.shares_memory({a}, {b})`"
)


def _tensor_behind(value: Value, node: cst.CSTNode, ctx: Context) -> str | None:
    """The source of the tensor a value stands for: `a` for `a`, `a.storage()`, `a.data`."""
    if value.kind is Kind.TENSOR:
        return ctx.source(node)
    if value.derived is not None and value.kind in (Kind.STORAGE, Kind.TYPED_STORAGE):
        call = node
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute):
            return ctx.source(call.func.value)
    return None


def _derived_operands(event: Compare, how: str, kinds) -> tuple[Value, Value] | None:
    """Both operands' sources when both are ``how(x)`` of a value of ``kinds``."""
    pairs = []
    for value in (event.left, event.right):
        if value.derived is None or value.derived[0] != how or value.derived[1].kind not in kinds:
            return None
        pairs.append(value.derived[1])
    return pairs[0], pairs[1]


def _inner(node: cst.CSTNode) -> cst.CSTNode:
    """`x` for `id(x)` and `x.data_ptr()`."""
    if isinstance(node, cst.Call):
        if node.args and not isinstance(node.func, cst.Attribute):
            return node.args[0].value
        if isinstance(node.func, cst.Attribute):
            return node.func.value
    return node


def _advice(a: str | None, b: str | None) -> str:
    return _ADVICE.format(a=a or "a", b=b or "b")


# `.storage()` makes a new TypedStorage object per call; untyped storages keep
# one Python object per storage (torch >= 2.2), so their identity is meaningful.
_TENSORISH = (Kind.TENSOR, Kind.TYPED_STORAGE)


@check("AL401", Compare)
def id_sharing_check(event: Compare, ctx: Context):
    if event.operator not in ("==", "!="):
        return
    operands = _derived_operands(event, "id", _TENSORISH)
    if operands is None:
        return
    left, right = _inner(event.left_node), _inner(event.right_node)
    a = _tensor_behind(operands[0], left, ctx)
    b = _tensor_behind(operands[1], right, ctx)
    if Kind.TENSOR in (operands[0].kind, operands[1].kind):
        why = "views of one storage are distinct objects with distinct ids"
    else:
        why = ("each `.storage()` call returns a new wrapper object that dies at once, "
               "so the ids say nothing and may even coincide")
    yield Finding(
        "AL401",
        event.node,
        event.stmt,
        f"`id()` comparison tests Python object identity, not shared memory: {why} · "
        + _advice(a, b),
    )


@check("AL402", Compare)
def is_sharing_check(event: Compare, ctx: Context):
    if event.operator not in ("is", "is not"):
        return
    if event.left.kind not in _TENSORISH or event.right.kind not in _TENSORISH:
        return
    a = _tensor_behind(event.left, event.left_node, ctx)
    b = _tensor_behind(event.right, event.right_node, ctx)
    if Kind.TENSOR in (event.left.kind, event.right.kind):
        why = ("tests whether two names hold one Python object; views of one storage "
               "(slices, `.t()`, `.view()`, `.detach()`) are distinct objects")
    else:
        outcome = "True" if event.operator == "is not" else "False"
        why = f"is always {outcome}: each `.storage()` call returns a new wrapper object"
    yield Finding(
        "AL402",
        event.node,
        event.stmt,
        f"`{event.operator}` between {'tensors' if Kind.TENSOR in (event.left.kind, event.right.kind) else 'storages'} {why} · "
        + _advice(a, b),
    )


@check("AL403", Compare)
def data_ptr_sharing_check(event: Compare, ctx: Context):
    if event.operator not in ("==", "!="):
        return
    if _derived_operands(event, "data_ptr", (Kind.TENSOR,)) is None:
        return
    a = ctx.source(_inner(event.left_node))
    b = ctx.source(_inner(event.right_node))
    yield Finding(
        "AL403",
        event.node,
        event.stmt,
        "`data_ptr()` equality only tells whether two tensors start at the same address: "
        f"a view at an offset (`{a}[1:]`) shares the storage with a different `data_ptr()` · "
        + _advice(a, b),
    )


_TYPED_STORAGE_CLASS = re.compile(r"^torch\.(?:cuda\.)?(?:storage\.)?(?!Untyped)(\w+)Storage$")


@check("AL404", Call)
def typed_storage_call(event: Call, ctx: Context):
    if event.qualname == "torch.Tensor.storage" and event.receiver is not None:
        tensor = ctx.source(event.receiver_node)
        yield Finding(
            "AL404",
            event.node,
            event.stmt,
            f"`{tensor}.storage()` returns a deprecated `TypedStorage` · use "
            f"`{tensor}.untyped_storage()` (its sizes and offsets count bytes, not elements)",
        )


@check("AL404", Reference)
def typed_storage_class(event: Reference, ctx: Context):
    match = _TYPED_STORAGE_CLASS.match(event.qualname)
    if match is None or match.group(1) == "_":
        return
    yield Finding(
        "AL404",
        event.node,
        event.stmt,
        f"`{event.qualname}` is a deprecated typed storage class · use "
        "`torch.UntypedStorage` (or a tensor of the wanted dtype)",
    )


# ---------------------------------------------------------------------------
# AL1xx: in-place writes autograd needs to know about.


def _code(node: cst.CSTNode, ctx: Context, limit: int = 60) -> str:
    text = ctx.source(node)
    return f"`{text if len(text) <= limit else text[:limit - 1] + '…'}`"


def _actor(label: str | None, node: cst.CSTNode, ctx: Context) -> str:
    """How a message names what saved or wrote: the call, or the module it ran."""
    if label is None:
        return _code(node, ctx)
    return f"{label} in {_code(node, ctx)}"


def _written(write: Write, ctx: Context) -> str:
    if write.target_node is not None:
        return _code(write.target_node, ctx)
    return "its input"


def _saved(save, ctx: Context) -> str:
    what = save.what if save.what_node is None else f"{save.what} {_code(save.what_node, ctx)}"
    return f"{_actor(save.label, save.node, ctx)} ({what}, line {ctx.line(save.node)})"


def _outcome(event: SavedWrite, ctx: Context, what: str) -> str:
    if event.returned:
        return f"backward through the tensor returned at line {ctx.line(event.consumer)} {what}"
    return f"{_code(event.consumer, ctx)} at line {ctx.line(event.consumer)} {what}"


def _related(event: SavedWrite) -> tuple:
    write, save = event.write, event.save
    related = [("saved for backward here", save.node)]
    if write.defined_at is not None:
        related.append(("the in-place write happens here", write.defined_at))
    related.append(("returned here: backward through it fails" if event.returned
                    else "backward runs here", event.consumer))
    return tuple(related)


@check("AL101", SavedWrite)
def inplace_on_saved_tensor(event: SavedWrite, ctx: Context):
    write, save = event.write, event.save
    if write.via not in (None, "view") or write.activation:
        return
    if write.target is None:  # optimizer.step()
        message = (f"{_code(write.node, ctx)} updates in place parameters that "
                   f"{_saved(save, ctx)} saved for backward · "
                   f"{_outcome(event, ctx, 'will raise')} · step after that backward pass")
    else:
        message = (f"{_written(write, ctx)} was saved for backward by {_saved(save, ctx)} · "
                   f"written in place by {_actor(write.label, write.node, ctx)} at line "
                   f"{ctx.line(write.node)} · {_outcome(event, ctx, 'will raise')} · use the "
                   "out-of-place op, or `.clone()` before writing")
    yield Finding("AL101", write.node, write.stmt, message, _related(event))


@check("AL103", SavedWrite)
def data_bypasses_autograd(event: SavedWrite, ctx: Context):
    write, save = event.write, event.save
    if write.via != "data":
        return
    yield Finding(
        "AL103", write.node, write.stmt,
        f"{_written(write, ctx)} writes through `.data` into a tensor {_saved(save, ctx)} "
        "saved for backward; `.data` has its own version counter, so autograd cannot notice · "
        f"{_outcome(event, ctx, 'will silently use the new values (wrong gradients)')} · "
        "write after the backward pass, or under `torch.no_grad()` without `.data` so autograd "
        "can check it",
        _related(event),
    )


@check("AL104", SavedWrite)
def detached_alias_write(event: SavedWrite, ctx: Context):
    write, save = event.write, event.save
    if write.via != "detach" or write.activation:
        return
    yield Finding(
        "AL104", write.node, write.stmt,
        f"{_written(write, ctx)} is a `.detach()` alias of a tensor {_saved(save, ctx)} saved "
        "for backward; it shares that tensor's storage and version counter, so writing it in "
        f"place at line {ctx.line(write.node)} invalidates the saved value · "
        f"{_outcome(event, ctx, 'will raise')} · `.clone()` the detached tensor before writing",
        _related(event),
    )


@check("AL105", SavedWrite)
def inplace_activation_clobbers_saved(event: SavedWrite, ctx: Context):
    write, save = event.write, event.save
    if not write.activation or write.via == "data":
        return
    yield Finding(
        "AL105", write.node, write.stmt,
        f"{_actor(write.label, write.node, ctx)} overwrites in place a tensor that "
        f"{_saved(save, ctx)} saved for backward · {_outcome(event, ctx, 'will raise')} · "
        "use `inplace=False` or the out-of-place op",
        _related(event),
    )


@check("AL105", StaleRead)
def inplace_activation_clobbers_alias(event: StaleRead, ctx: Context):
    write = event.write
    if not write.activation:
        return
    related = [(f"`{event.name}` is read here and sees the overwritten values", event.read)]
    if write.defined_at is not None:
        related.append(("the in-place write happens here", write.defined_at))
    yield Finding(
        "AL105", write.node, write.stmt,
        f"{_actor(write.label, write.node, ctx)} overwrites {_written(write, ctx)} in place, "
        f"but `{event.name}` still holds that tensor and is read at line {ctx.line(event.read)} "
        "· use `inplace=False`, or `.clone()` what must keep the old values",
        tuple(related),
    )


@check("AL102", InplaceWrite)
def inplace_on_leaf(event: InplaceWrite, ctx: Context):
    write = event.write
    target = write.target
    if target is None or not target.leaf or target.requires_grad is not True:
        return
    if write.via not in (None, "view") or write.grad_enabled is not True:
        return
    related = ()
    if target.origin is not None:
        related = (("created here as a leaf that requires grad", target.origin),)
    what = "a view of a leaf" if write.via == "view" else "a leaf"
    yield Finding(
        "AL102", write.node, write.stmt,
        f"{_written(write, ctx)} is {what} tensor that requires grad: the in-place "
        f"{_actor(write.label, write.node, ctx)} outside `torch.no_grad()` raises \"a leaf "
        "Variable that requires grad is being used in an in-place operation\" · wrap the "
        "update in `with torch.no_grad():`",
        related,
    )
