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
    LostWrite,
    NonContiguousView,
    Reference,
    SavedWrite,
    StaleRead,
    Value,
    Write,
    discards,
    regions_overlap,
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
    tensors = Kind.TENSOR in (event.left.kind, event.right.kind)
    operands = "tensors" if tensors else "storages"
    if tensors:
        why = ("tests whether two names hold one Python object; views of one storage "
               "(slices, `.t()`, `.view()`, `.detach()`) are distinct objects")
    else:
        outcome = "True" if event.operator == "is not" else "False"
        why = f"is always {outcome}: each `.storage()` call returns a new wrapper object"
    yield Finding(
        "AL402",
        event.node,
        event.stmt,
        f"`{event.operator}` between {operands} {why} · " + _advice(a, b),
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


# ---------------------------------------------------------------------------
# AL2xx, AL301: memory shared when it looks separate, separate when it looks shared.


def _writer(write: Write, ctx: Context) -> str:
    return _actor(write.label, write.node, ctx)


def _sees(event: StaleRead, ctx: Context) -> str:
    return f"`{event.name}` read at line {ctx.line(event.read)} sees the change"


def _read_related(event: StaleRead) -> tuple:
    return (f"`{event.name}` is read here", event.read)


def _plain_write(event: StaleRead) -> bool:
    """A write by code that names its target, of a tensor both names hold."""
    write = event.write
    return (write.target is not None and not write.activation and write.callee is None
            and event.value.snapshot is None)


@check("AL201", StaleRead)
def write_through_view(event: StaleRead, ctx: Context):
    write, value = event.write, event.value
    target = write.target
    if not _plain_write(event) or write.fill or target.expanded:
        return
    if target.kind is not Kind.TENSOR or value.kind is not Kind.TENSOR:
        return
    if target.maybe_of is not None or value.maybe_of is not None:
        return
    if not isinstance(write.target_node, (cst.Name, cst.Attribute)):
        return  # `x[:, 0] = 0`, `x[i].zero_()`: writing part of x is the intent
    if event.rewritten:
        return  # the reader updates the base too: it is a buffer being filled
    if target.via is not None and value.via is not None and not (
            target.region is not None and value.region is not None
            and regions_overlap(target.region, value.region)):
        return  # two views (unbind pieces, slices): overlap not proven
    written = _code(write.target_node, ctx)
    if target.via in ("view", "detach") and target.view_origin is not None:
        origin = target.view_origin
        message = (f"{written} is a view made by {_code(origin, ctx)} at line {ctx.line(origin)}"
                   f" · written in place by {_writer(write, ctx)} at line {ctx.line(write.node)}"
                   f" · {_sees(event, ctx)} · `.clone()` the view before writing it, or write "
                   "the base on purpose")
    elif value.via in ("view", "detach") and value.view_origin is not None:
        origin = value.view_origin
        message = (f"`{event.name}` is a view made by {_code(origin, ctx)} at line "
                   f"{ctx.line(origin)} · its base {written} is written in place by "
                   f"{_writer(write, ctx)} at line {ctx.line(write.node)} · "
                   f"{_sees(event, ctx)} · `.clone()` the view if it must keep the old values")
    else:
        return
    yield Finding("AL201", write.node, write.stmt, message,
                  (("the view is made here", origin), _read_related(event)))


@check("AL202", NonContiguousView)
def view_of_noncontiguous(event: NonContiguousView, ctx: Context):
    origin = event.receiver.layout_origin
    if origin is None:
        return
    yield Finding(
        "AL202", event.node, event.stmt,
        f"{_code(event.node, ctx)} needs a contiguous-compatible layout, but "
        f"{_code(origin, ctx)} at line {ctx.line(origin)} made the tensor non-contiguous: "
        "this raises \"view size is not compatible with input tensor's size and stride\" · "
        "use `.reshape(...)`, or `.contiguous().view(...)`",
        (("made non-contiguous here", origin),),
    )


@check("AL203", InplaceWrite)
def overlapping_write(event: InplaceWrite, ctx: Context):
    write = event.write
    target = write.target
    if target is None or target.kind is not Kind.TENSOR:
        return
    if target.expanded:
        origin = target.view_origin
        yield Finding(
            "AL203", write.node, write.stmt,
            f"{_writer(write, ctx)} writes in place a tensor made by `expand` "
            f"({_code(origin, ctx)}, line {ctx.line(origin)}): several of its elements are one "
            "memory location, so most ops raise (\"unsupported operation: more than one "
            "element of the written-to tensor refers to a single memory location\") and the "
            "rest (`masked_fill_`, indexing) write each location several times · "
            "`.clone()` (or `.contiguous()`) it first, or build it with `repeat`",
            (("expanded here", origin),) if origin is not None else (),
        )
        return
    for value, role in write.inputs:
        if value.kind is not Kind.TENSOR or value.storage is None \
                or value.storage != target.storage:
            continue
        if role == "index":
            overlaps = True
        else:
            if write.region is None:
                mine, whole_target = (None if target.via is None else target.region), \
                    target.via is None
            else:
                mine, whole_target = (write.region or None), False
            theirs = None if value.via is None else value.region
            if whole_target and value.via is None:
                continue  # the same memory exactly: `a.add_(a)` is fine
            if whole_target or value.via is None:
                overlaps = True  # a view lies inside its base
            elif mine is None or theirs is None:
                continue  # two views of unknown extent: overlap not proven
            else:
                overlaps = regions_overlap(mine, theirs)
        if not overlaps:
            continue
        source = _code(role, ctx) if isinstance(role, cst.CSTNode) else "its input"
        yield Finding(
            "AL203", write.node, write.stmt,
            f"{_writer(write, ctx)} reads {source} while writing memory that overlaps it "
            "(the same storage, partly): the result depends on the order elements are "
            "processed, and torch raises \"unsupported operation: some elements of the input "
            "tensor and the written-to tensor refer to a single memory location\" · "
            "`.clone()` the input first",
            (),
        )
        return


@check("AL204", LostWrite)
def write_to_copy_lost(event: LostWrite, ctx: Context):
    write = event.write
    copy = write.target.copied_at
    yield Finding(
        "AL204", write.node, write.stmt,
        f"{_code(copy, ctx)} is a new tensor (advanced indexing and ops such as "
        "`index_select` or `masked_select` copy), so the in-place "
        f"{_writer(write, ctx)} changes only that copy, which is then dropped · write the "
        "source directly: `x[idx] = v`, `x.index_fill_(...)`, `x.masked_fill_(...)`, or "
        "combine the indices into one `x[...] = v`",
        (("the copy is made here", copy),),
    )


def _maybe_alias_message(write: Write, ctx: Context, tail: str) -> str:
    origin = write.target.view_origin
    return (f"{_code(write.target_node, ctx) if write.target_node else 'the tensor'} comes from "
            f"{_code(origin, ctx)} (line {ctx.line(origin)}), which returns its source itself "
            "(or a view of it) when no conversion or copy is needed and a new tensor otherwise"
            f" · the in-place {_writer(write, ctx)} at line {ctx.line(write.node)} {tail} · "
            "use the out-of-place op, or `.clone()` to always get a copy")


@check("AL205", InplaceWrite)
def ambiguous_alias_write_to_argument(event: InplaceWrite, ctx: Context):
    write = event.write
    target = write.target
    if target is None or target.maybe_of is None or write.activation or write.callee:
        return
    if not (isinstance(target.maybe_of, tuple) and target.maybe_of[0] == "arg"):
        return
    yield Finding("AL205", write.node, write.stmt,
                  _maybe_alias_message(write, ctx, "then writes the caller's tensor for some "
                                       "inputs"),
                  (("the ambiguous call", target.view_origin),))


@check("AL205", StaleRead)
def ambiguous_alias_write_read_later(event: StaleRead, ctx: Context):
    write = event.write
    target = write.target
    if target is None or target.maybe_of is None or write.activation or write.callee:
        return
    if event.value.storage != target.maybe_of:
        return
    yield Finding("AL205", write.node, write.stmt,
                  _maybe_alias_message(write, ctx, f"may change `{event.name}`, read at line "
                                       f"{ctx.line(event.read)}"),
                  (("the ambiguous call", target.view_origin), _read_related(event)))


@check("AL206", InplaceWrite)
def replicated_tensor(event: InplaceWrite, ctx: Context):
    write = event.write
    target = write.target
    if target is None or target.replica is None:
        return
    container = target.replica
    yield Finding(
        "AL206", write.node, write.stmt,
        f"{_written(write, ctx)} is an element of {_code(container, ctx)} (line "
        f"{ctx.line(container)}), which holds the same tensor object in every place · the "
        f"in-place {_writer(write, ctx)} changes all of them · build one tensor per element: "
        "`[torch.zeros(...) for _ in range(n)]` / `{k: torch.zeros(...) for k in keys}`",
        (("the repeated container is built here", container),),
    )


@check("AL207", StaleRead)
def snapshot_by_reference(event: StaleRead, ctx: Context):
    write, value = event.write, event.value
    snapshot = value.snapshot
    if snapshot is None or write.activation or write.callee is not None:
        return
    if value.kind is Kind.MODULE:
        kind, advice = "the same module under a second name", "`copy.deepcopy(...)` of the module"
    elif value.kind is Kind.TENSOR:
        kind, advice = "a second name for the same tensor", "`.clone()` (or `.detach().clone()`)"
    else:
        kind = "references to the same tensors"
        advice = "`copy.deepcopy(...)`, or `{k: v.clone() for k, v in ...items()}`"
    yield Finding(
        "AL207", snapshot, snapshot,
        f"{_code(snapshot, ctx)} keeps {kind}, not a copy · {_writer(write, ctx)} at line "
        f"{ctx.line(write.node)} changes it in place · `{event.name}` read at line "
        f"{ctx.line(event.read)} holds the new values · take a copy: {advice}",
        (("changed in place here", write.node), _read_related(event)),
    )


@check("AL208", StaleRead)
def argument_written(event: StaleRead, ctx: Context):
    write, value = event.write, event.value
    if write.callee is None or write.declared or write.activation:
        return
    if discards(write.stmt, write.node):
        return  # called for its effect alone: the caller expects the write
    if write.target is None or value.kind is not Kind.TENSOR:
        return
    inside = write.defined_at
    yield Finding(
        "AL208", write.node, write.stmt,
        f"{_code(write.node, ctx)} writes its argument {_written(write, ctx)} in place "
        f"({_code(inside, ctx)} at line {ctx.line(inside)}, inside `{write.callee}`) though "
        f"nothing in its name or docstring says so · {_sees(event, ctx)} · return a new tensor "
        f"instead, pass a `.clone()`, or name the function `{write.callee}_`",
        (("the argument is written here", inside), _read_related(event)),
    )


@check("AL301", StaleRead)
def numpy_shared_write(event: StaleRead, ctx: Context):
    write, value = event.write, event.value
    target = write.target
    if target is None or {target.kind, value.kind} != {Kind.TENSOR, Kind.NDARRAY}:
        return
    if write.activation or write.callee is not None:
        return
    shared = target.view_origin if target.view_origin is not None else value.view_origin
    if shared is None:
        return
    side = "the tensor" if target.kind is Kind.TENSOR else "the NumPy array"
    yield Finding(
        "AL301", write.node, write.stmt,
        f"{_written(write, ctx)} and `{event.name}` share one buffer ({_code(shared, ctx)} at "
        f"line {ctx.line(shared)} does not copy) · {_writer(write, ctx)} writes {side} in place"
        f" at line {ctx.line(write.node)} · {_sees(event, ctx)} · copy at the boundary: "
        "`torch.tensor(a)`, `torch.from_numpy(a.copy())` or `t.numpy().copy()`",
        (("memory is shared from here", shared), _read_related(event)),
    )
