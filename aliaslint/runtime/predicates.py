"""The runtime predicates that confirm static findings.

A rule module imports its predicate by name (``Rule(..., confirm=SHARED_WRITE)``); a
finding's witness carries the object, and ``aliaslint.runtime.confirm`` evaluates it while the
program runs.  ``Kind`` names each predicate: its value is the stable name a cached finding
stores, mapped back to the object by ``named``.  Each predicate says which run-time events feed it
and holds the functions that evaluate them: the line hook at the witness's rows (when a
row starts, and torch's errors there), and the ATen ops those rows run.  Predicates read
the running frame (``aliaslint.runtime.frames``) and never call user code.
"""

from __future__ import annotations

import enum
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from types import CodeType, FrameType
from typing import Any, TYPE_CHECKING

from aliaslint.runtime.frames import (
    MAX_ENTRIES,
    bindings,
    describe,
    entries,
    holders,
    holds,
    items,
    lookup,
    overlaps,
    same_memory,
)
from aliaslint.runtime.witness import Witness

if TYPE_CHECKING:
    from torch import Tensor

    from aliaslint.runtime.dispatch import OpEvent


@dataclass
class Pending:
    """What a line of one frame recorded for the frame's later lines (AL207, AL208): the
    tensors (label, weak reference, version) and, for a snapshot, the object its name
    holds.  ``tensors`` is None for a snapshot whose statement has not finished yet."""

    witness: Witness
    code: CodeType
    tensors: list[tuple[str, weakref.ref[Tensor], int]] | None = None
    holder: weakref.ref[object] | None = None
    holder_id: int = 0
    holder_type: type | None = None
    roots: list[tuple[str, weakref.ref[Tensor]]] = field(default_factory=list)  # AL208

    def holds(self, value: object) -> bool:
        if self.holder is not None:
            return value is self.holder()
        return id(value) == self.holder_id and type(value) is self.holder_type


# When a witness's row starts: evaluate, or leave a record for the frame's later lines.
LineCheck = Callable[[Witness, FrameType], "Pending | None"]
# Every ATen op that runs at a witness's row.
OpCheck = Callable[[Witness, "OpEvent"], None]
# The tensors an op at a witness's row wrote, and the frame that ran it.
WriteCheck = Callable[[Witness, "list[Tensor]", "FrameType | None"], None]


class Kind(enum.Enum):
    """Which predicate a witness asks for; the value is what the cache stores."""

    SAVED = "saved"
    CLOBBERED = "clobbered"
    LEAF = "leaf"
    FORBIDDEN_VIEW = "forbidden-view"
    NEGATIVE_SLOPE = "negative-slope"
    SHARED_WRITE = "shared-write"
    VIEW = "view"
    COPY_WRITE = "copy-write"
    SOURCE_WRITE = "source-write"
    NUMPY = "numpy"
    REPLICATED = "replicated"
    SNAPSHOT = "snapshot"
    ARGUMENT = "argument"
    COMPARE = "compare"
    STORAGE = "storage"
    TEMPORARY_DATA = "temporary-data"


@dataclass(frozen=True)
class Predicate:
    kind: Kind
    watches_ops: bool  # fed the ATen ops its rows run (writes, views), not only their lines
    claim: str  # what holds when a finding is confirmed
    at_line: LineCheck | None = None
    at_op: OpCheck | None = None
    at_write: WriteCheck | None = None
    # torch's errors that are the hazard itself, raised at a row (any one of them)
    raises: tuple[str, ...] = ()
    # The hazard happens in a later backward pass: the finding counts as reached only if a
    # backward pass read saved tensors after its row ran.
    needs_backward: bool = False
    # The hazard shows in a callee the finding points into: ops at the finding's own rows
    # are watched while the call's line is pending (AL208).
    watches_callee: bool = False
    # What a record a row left is settled by once the row's line has finished; None: it is
    # a snapshot, followed at the frame's later lines.
    after_line: Callable[[Pending], None] | None = None
    # The tracer's own findings can confirm it (not the sharing tests, which it never makes).
    matches_tracer: bool = True

    @property
    def name(self) -> str:
        return self.kind.value


PREDICATES: dict[Kind, Predicate] = {}


def _predicate(predicate: Predicate) -> Predicate:
    if predicate.kind in PREDICATES:
        raise ValueError(f"two predicates of kind {predicate.kind.value}")
    PREDICATES[predicate.kind] = predicate
    return predicate


def named(name: str) -> Predicate:
    """The predicate a stored witness names; ValueError for a name this version lacks."""
    return PREDICATES[Kind(name)]


# --- saved (AL101, AL103, AL104): the tracer's own findings, matched when the run ends ------

SAVED = _predicate(Predicate(
    Kind.SAVED, False, "a tensor autograd saved was written before its backward "
    "ran, and the backward pass read it", needs_backward=True))


# --- clobbered (AL105) --------------------------------------------------------------------------


def _stale_alias(witness: Witness, written: list[Tensor], frame: FrameType | None) -> None:
    """AL105: the write hits memory another name of the same frame still holds."""
    named = bindings(frame)
    for tensor in written:
        names = holders(named, tensor)
        if len(names) >= 2:
            shown = ", ".join(f"`{name}`" for name in names)
            witness.confirm(f"the in-place write hit memory that {shown} all still hold")
            return
    witness.deny("the in-place write hit no tensor another live name holds, and nothing "
                 "autograd saved")


CLOBBERED = _predicate(Predicate(
    Kind.CLOBBERED, True, "an in-place activation wrote memory another live "
    "name or a pending backward still needs", at_write=_stale_alias))


# --- leaf (AL102) -------------------------------------------------------------------------------


def _leaf_write(witness: Witness, written: list[Tensor], frame: FrameType | None) -> None:
    import torch

    for tensor in written:
        if tensor.is_leaf and tensor.requires_grad and torch.is_grad_enabled():
            witness.confirm("an in-place op wrote a leaf tensor that requires grad with grad "
                            "mode on")
            return
    witness.deny("the in-place op at this line wrote no leaf that requires grad "
                 "(grad mode off, or not a leaf)")


LEAF = _predicate(Predicate(
    Kind.LEAF, True, "an in-place op wrote a leaf that requires grad with grad "
    "mode on", at_write=_leaf_write,
    raises=("a leaf Variable that requires grad is being used in an in-place "
            "operation",)))


# --- forbidden-view (AL106) ---------------------------------------------------------------------


def _accepted_write(witness: Witness, written: list[Tensor], frame: FrameType | None) -> None:
    # Autograd checks a forbidden view before the op is dispatched: an op seen here passed.
    witness.deny("autograd accepted the in-place write at this line")


FORBIDDEN_VIEW = _predicate(Predicate(
    Kind.FORBIDDEN_VIEW, True, "autograd refused an in-place write to a view it "
    "cannot rebase", at_write=_accepted_write,
    raises=("This view is the output of a function that returns multiple views",
            "A view was created in no_grad mode and is being modified inplace",
            "This view was created inside a custom Function",
            "A saved tensor pack hook is modifying its input in place")))


# --- negative-slope (AL105): the in-place activation's backward refuses its slope ----------------

def _negative_slope(witness: Witness, event: OpEvent) -> None:
    """The in-place activation ran with a negative slope on a tensor that requires grad: its
    backward will raise if a backward pass reaches it (the raise confirms it fully)."""
    if not event.name.endswith("_") or not event.args:
        return
    first = event.args[0]
    if not getattr(first, "requires_grad", False):
        return
    if any(isinstance(arg, float) and arg < 0 for arg in (*event.args[1:],
                                                          *event.kwargs.values())):
        witness.ran = True
        witness.confirm("the in-place activation ran with a negative slope on a tensor that "
                        "requires grad: a backward pass through it raises", strength=1)


NEGATIVE_SLOPE = _predicate(Predicate(
    Kind.NEGATIVE_SLOPE, True, "the backward of an in-place activation refused "
    "its negative slope", at_op=_negative_slope,
    raises=("backward calculation is triggered with a negative slope",)))


# --- shared-write (AL201, AL203, ...) and numpy (AL301) -----------------------------------------


def _shared_write(witness: Witness, written: list[Tensor], frame: FrameType | None) -> None:
    named = bindings(frame)
    for tensor in written:
        for name, value in named:
            if value is not tensor and overlaps(value, tensor):
                witness.confirm(f"the in-place write hit memory that `{name}` "
                                f"(a live {describe(value)}) shares")
                return
    witness.deny("no in-place write at this line hit memory another live tensor or array "
                 "shares")


SHARED_WRITE = _predicate(Predicate(
    Kind.SHARED_WRITE, True, "an in-place write hit memory another live name "
    "shares", at_write=_shared_write))


# --- view (AL202) -------------------------------------------------------------------------------


def _view_input(witness: Witness, event: OpEvent) -> None:
    if event.name != "view":
        return
    witness.ran = True
    if event.args and hasattr(event.args[0], "is_contiguous") \
            and not event.args[0].is_contiguous():
        witness.confirm("`view` received a non-contiguous tensor (it did not raise for these "
                        "shapes)", strength=1)


VIEW = _predicate(Predicate(
    Kind.VIEW, True, "`view` received a non-contiguous tensor", at_op=_view_input,
    raises=("view size is not compatible with input tensor's size and stride",)))


# --- copy-write (AL204) -------------------------------------------------------------------------


def _lost_write(witness: Witness, written: list[Tensor], frame: FrameType | None) -> None:
    """AL204: the write lands in a temporary copy that no live name of the frame holds."""
    named = bindings(frame)
    for tensor in written:
        if not holders(named, tensor):
            witness.confirm("the in-place write hit a temporary tensor that no live name "
                            "holds: the written values are lost")
            return
    witness.deny("every in-place write at this line hit memory a live name holds")


COPY_WRITE = _predicate(Predicate(
    Kind.COPY_WRITE, True, "an in-place write hit a temporary no live name holds",
    at_write=_lost_write))


# --- source-write (AL205) -----------------------------------------------------------------------


def _source_write(witness: Witness, written: list[Tensor], frame: FrameType | None) -> None:
    """AL205: the write reached the memory of the call's source (it returned its source)."""
    for operand in witness.operands:
        if operand.root is None or frame is None:
            continue
        try:
            value = lookup(frame, operand.root)
        except Exception:  # unreadable without running user code: not evidence either way
            continue
        for tensor in written:
            if holds(value, tensor):
                witness.confirm(f"the call returned `{operand.text}` itself or a view of it, "
                                "and the in-place write changed its memory")
                return
    witness.deny("the call copied on this run: the in-place write did not reach its source")


SOURCE_WRITE = _predicate(Predicate(
    Kind.SOURCE_WRITE, True, "an in-place write reached the source of a call "
    "that returns its source only sometimes", at_write=_source_write))


# --- numpy (AL301) ------------------------------------------------------------------------------


def _numpy_pair(witness: Witness, frame: FrameType) -> None:
    """AL301, a write from the NumPy side (invisible to ATen): when the line starts, a live
    array and a live tensor of the frame share memory."""
    import torch

    named = bindings(frame)
    tensors = [(n, v) for n, v in named if isinstance(v, torch.Tensor)]
    for name, array in named:
        if isinstance(array, torch.Tensor):
            continue
        for other, tensor in tensors:
            if overlaps(array, tensor):
                witness.confirm(f"when the line ran, the array `{name}` and the tensor "
                                f"`{other}` shared memory")
                return
    witness.deny("no live array and tensor shared memory when the line ran, and no "
                 "in-place write hit shared memory")


NUMPY = _predicate(Predicate(
    Kind.NUMPY, True, "a live array and a live tensor shared the written memory",
    at_line=_numpy_pair, at_write=_shared_write))


# --- replicated (AL206) -------------------------------------------------------------------------


def _replicated_write(witness: Witness, written: list[Tensor], frame: FrameType | None) -> None:
    """AL206: the written tensor is (or shares memory with) two or more entries of one list,
    tuple or dict the frame holds."""
    # Every container of the frame is scanned: once the hazard was seen, no more.
    if frame is None or witness.strength >= 2:
        return
    for name, container in list(frame.f_locals.items()):
        if not isinstance(container, (list, tuple, dict)):
            continue
        found = entries(container, name)
        if len(found) < 2:
            continue
        for tensor in written:
            hits = [(label, entry) for label, entry in found
                    if entry is tensor or same_memory(entry, tensor)]
            if len(hits) < 2:
                continue
            labels = ", ".join(f"`{label}`" for label, _ in hits[:4])
            more = f" (and {len(hits) - 4} more)" if len(hits) > 4 else ""
            if all(entry is hits[0][1] for _, entry in hits):
                how = "are one tensor object"
            else:
                how = "share the written memory"
            witness.confirm(f"the in-place write hit {labels}{more}: {len(hits)} entries of "
                            f"`{name}` that {how}")
            return
    witness.deny("the written tensor is at most one entry of every list, tuple and dict the "
                 "frame holds")


REPLICATED = _predicate(Predicate(
    Kind.REPLICATED, True, "an in-place write hit several entries of one "
    "container", at_write=_replicated_write))


# --- snapshot (AL207): recorded when the statement has finished, checked at later lines ---------


def _versioned(label: str, tensor: Tensor) -> tuple[str, weakref.ref[Tensor], int] | None:
    try:
        return label, weakref.ref(tensor), tensor._version
    except (RuntimeError, TypeError):  # inference tensors have no version counter
        return None


def _await_snapshot(witness: Witness, frame: FrameType) -> Pending:
    # Read when the statement has finished: at the frame's next line elsewhere.
    return Pending(witness, frame.f_code)


def _snapshot_tensors(value: object, label: str) -> list[tuple[str, Tensor]]:
    """The tensors a snapshot holds: a tensor, a module's parameters and buffers, the values
    of a (state) dict, the entries of a list or tuple; nested containers too."""
    import torch

    found: list[tuple[str, Tensor]] = []
    seen: set[int] = set()

    def visit(item: object, place: str, depth: int) -> None:
        if len(found) >= MAX_ENTRIES or depth > 32 or id(item) in seen:
            return
        if isinstance(item, torch.Tensor):
            seen.add(id(item))
            found.append((place, item))
        elif isinstance(item, torch.nn.Module):
            seen.add(id(item))
            for table in ("_parameters", "_buffers", "_modules"):
                for key, member in dict.items(item.__dict__.get(table) or {}):
                    if member is not None:
                        visit(member, f"{place}.{key}", depth + 1)
        elif isinstance(item, (list, tuple, dict)) and depth < 6:
            seen.add(id(item))
            for key, member in items(item):
                visit(member, f"{place}[{key!r}]", depth + 1)

    visit(value, label, 0)
    return found


def _layout(tensor: Tensor) -> tuple[object, ...]:
    return (tensor.data_ptr(), tuple(tensor.shape), tuple(tensor.stride()), tensor.dtype)


def capture_snapshot(record: Pending, frame: FrameType) -> None:
    """AL207, once the snapshot statement has finished: what its name now holds.

    Tensors of the frame over exactly the same memory are followed too: ``prev = w.data``
    has a version counter of its own, so writes through ``w`` show only on ``w``'s."""
    import torch

    witness = record.witness
    if witness.target is None:
        witness.cannot("the name the snapshot is assigned to could not be found in the source")
        return
    name = ".".join(witness.target)
    try:
        value = lookup(frame, witness.target)
    except Exception:
        witness.cannot(f"`{name}` could not be read without running user code")
        return
    held = _snapshot_tensors(value, name)
    if not held:
        witness.deny(f"`{name}` is a {describe(value)} that holds no tensor")
        return
    keys: dict[tuple[object, ...], str] = {}
    for label, tensor in held:
        try:
            keys[_layout(tensor)] = label
        except (RuntimeError, NotImplementedError, TypeError, ValueError):
            pass
    for local, other in bindings(frame):
        if not isinstance(other, torch.Tensor) or any(other is t for _, t in held):
            continue
        try:
            same = keys.get(_layout(other))
        except (RuntimeError, NotImplementedError, TypeError, ValueError):
            continue
        if same is not None:
            held.append((f"{local}` (over the memory of `{same}`)", other))
    shown = [(label if label.endswith(")") else f"{label}`", t) for label, t in held]
    record.tensors = [entry for entry in (_versioned(f"`{label}", t) for label, t in shown)
                      if entry]
    try:
        record.holder = weakref.ref(value)
    except TypeError:  # a plain dict or list: known by identity while it is bound
        record.holder_id, record.holder_type = id(value), type(value)


def check_snapshot(record: Pending, frame: FrameType, event: str) -> bool:
    """AL207 at a related line, the snapshot line again, or the frame's return: was a tensor
    the snapshot holds written in place while its name still held it?  False once the
    record is settled."""
    witness = record.witness
    name = ".".join(witness.target or ())
    current: object = check_snapshot  # unbound: holds nothing the record knows
    if witness.target is not None:
        try:
            current = lookup(frame, witness.target)
        except Exception:  # unbound or unreadable: as above
            pass
    if not record.holds(current):
        witness.deny(f"`{name}` was rebound before any tensor it held was written in place")
        return False
    for label, ref, version in record.tensors or ():
        tensor = ref()
        if tensor is None:
            continue
        try:
            now = tensor._version
        except RuntimeError:
            continue
        if now > version:
            seen = ("when the function returned" if event == "return"
                    else f"at line {frame.f_lineno}")
            if label == f"`{name}`":
                label = f"the tensor `{name}` holds"
            witness.confirm(f"{label} was written in place after the snapshot (version "
                            f"{version} → {now}, seen {seen}) while `{name}` still held it")
            return False
    if event == "return":
        witness.deny(f"no tensor `{name}` held was written in place before the function "
                     "returned")
    return True


SNAPSHOT = _predicate(Predicate(
    Kind.SNAPSHOT, False, "a tensor a snapshot holds was written while its name "
    "held it", at_line=_await_snapshot))


# --- argument (AL208): versions recorded when the call's line starts, compared after it ---------


def _record_arguments(witness: Witness, frame: FrameType) -> Pending | None:
    """AL208, when the call's line starts: the version of every tensor argument that is a
    plain name or attribute chain (or a view of one: views share their base's counter)."""
    import torch

    tensors: list[tuple[str, weakref.ref[Tensor], int]] = []
    roots: list[tuple[str, weakref.ref[Tensor]]] = []
    for operand in witness.operands:
        if operand.root is None:
            continue
        try:
            value = lookup(frame, operand.root)
        except Exception:  # unreadable without running user code: not followed
            continue
        label = ".".join(operand.root)
        candidates: list[tuple[str, Tensor]] = []
        if isinstance(value, torch.Tensor):
            candidates = [(label, value)]
        elif isinstance(value, (list, tuple, dict)):
            candidates = entries(value, label, depth=1)
        roots += [(name, weakref.ref(t)) for name, t in candidates]
        if ".data" not in operand.derived:  # `.data` has a version counter of its own
            tensors += filter(None, (_versioned(name, t) for name, t in candidates))
    if not roots:
        witness.deny("no argument of the call is a tensor that can be read by name")
        return None
    return Pending(witness, frame.f_code, tensors, roots=roots)


def settle_arguments(record: Pending) -> None:
    """AL208, when the call's line has finished: did an argument's version counter move?"""
    for label, ref, version in record.tensors or ():
        tensor = ref()
        if tensor is None:
            continue
        try:
            now = tensor._version
        except RuntimeError:
            continue
        if now > version:
            record.witness.confirm(f"the call wrote its argument `{label}` in place (its "
                                   f"version went from {version} to {now} during the line)")
            return
    if record.tensors:
        record.witness.deny("the call returned with the version of every tensor argument "
                            "unchanged")
    else:
        record.witness.deny("the arguments were passed as `.data` (no version counter shows "
                            "their writes) and no op at the callee's write reached them")


ARGUMENT = _predicate(Predicate(
    Kind.ARGUMENT, False, "a call wrote its tensor argument in place",
    at_line=_record_arguments, watches_callee=True,
    after_line=settle_arguments))


# --- compare (AL401, AL402, AL403) --------------------------------------------------------------


def _evaluate_comparison(witness: Witness, frame: FrameType) -> None:
    import torch

    if not witness.operands:
        witness.cannot("the comparison's operands could not be found in the source")
        return
    values: list[object] = []
    for operand in witness.operands:
        value = None
        if operand.root is not None:
            try:
                value = lookup(frame, operand.root)
            except Exception:  # unreadable without running user code: unknown
                value = None
        values.append(value)
    # Recognising the deprecated class is the point here, not using it.
    storages = (torch.TypedStorage, torch.UntypedStorage)  # noqa: AL404
    for operand, value in zip(witness.operands, values):
        if value is not None and not isinstance(value, (torch.Tensor, *storages)):
            root = ".".join(operand.root or ())
            witness.deny(f"`{root}` is a {describe(value)} at run time, not a tensor")
            return
    known = [(o, v) for o, v in zip(witness.operands, values) if v is not None]
    if not known:
        witness.cannot("no operand could be read without running user code")
        return
    derived = [o for o, _ in known if o.derived]
    tensors = [v for _, v in known if isinstance(v, torch.Tensor)]
    if len(known) == 2 and len(tensors) == 2 and not derived:
        (left, _), (right, _) = known
        a, b = tensors
        if witness.comparison == "data_ptr":
            same = a.data_ptr() == b.data_ptr()
            test = "`data_ptr()` equality"
        else:
            same = a is b
            test = "identity" if witness.comparison == "is" else "`id()` equality"
        shares = overlaps(a, b) or (
            a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr() != 0)
        if shares and not same:
            witness.confirm(f"`{left.text}` and `{right.text}` share memory, but {test} "
                            "said they do not")
        elif same and not shares and a is not b:
            witness.confirm(f"{test} said `{left.text}` and `{right.text}` are one, but "
                            "they share no memory")
        else:
            relation = "share memory" if shares else "share no memory"
            witness.confirm(f"`{left.text}` and `{right.text}` are tensors compared by "
                            f"{test}; on this run they {relation}, so the answer "
                            "happened to be right", strength=1)
        return
    if derived:
        made = ", ".join(f"`{o.text}`" for o in derived)
        witness.confirm(f"{made} built a new object over a tensor's memory, which the "
                        "comparison treats as the memory itself")
        return
    kinds = ", ".join(f"`{o.text}` is a {describe(v)}" for o, v in known)
    witness.confirm(f"{kinds}: a memory test by object identity or address", strength=1)


COMPARE = _predicate(Predicate(
    Kind.COMPARE, False, "a sharing test compared tensors or storages by "
    "identity or address", at_line=_evaluate_comparison,
    matches_tracer=False))


# --- storage (AL404) ----------------------------------------------------------------------------


def _first_operand(witness: Witness, frame: FrameType, what: str) -> tuple[Any, object] | None:
    """The witness's first operand and the value its root holds in ``frame``; None (the
    witness could not be evaluated) when it cannot be read without running user code."""
    operand = witness.operands[0] if witness.operands else None
    if operand is None or operand.root is None:
        witness.cannot(f"{what} could not be read without running user code")
        return None
    try:
        return operand, lookup(frame, operand.root)
    except Exception:
        witness.cannot(f"`{operand.text}` could not be read without running user code")
        return None


def _evaluate_storage(witness: Witness, frame: FrameType) -> None:
    import torch

    if witness.target is not None:
        shown = ".".join(witness.target)
        try:
            value = lookup(frame, witness.target)
        except Exception:
            witness.cannot(f"`{shown}` could not be read without running user code")
            return
        if isinstance(value, type) and issubclass(value, torch.TypedStorage):  # noqa: AL404
            witness.confirm(f"`{shown}` is the typed storage class `{value.__name__}`")
        else:
            witness.deny(f"`{shown}` is a {describe(value)}, not a typed storage class")
        return
    read = _first_operand(witness, frame, "the receiver of `.storage()`")
    if read is None:
        return
    operand, value = read
    if isinstance(value, torch.Tensor):
        witness.confirm(f"`{operand.text}` is a tensor: `.storage()` builds a "
                        "`TypedStorage`")
    else:
        witness.deny(f"`{operand.text}` is a {describe(value)}, not a tensor")


STORAGE = _predicate(Predicate(
    Kind.STORAGE, False, "`.storage()` was called on a tensor, or a typed "
    "storage class was used", at_line=_evaluate_storage,
    matches_tracer=False))


# --- temporary-data (AL209) -----------------------------------------------------------------


def _evaluate_temporary_data(witness: Witness, frame: FrameType) -> None:
    import torch

    read = _first_operand(witness, frame, "the tensor the temporary is made from")
    if read is None:
        return
    operand, value = read
    if isinstance(value, torch.Tensor):
        witness.confirm(f"`{'.'.join(operand.root)}` is a tensor: `{operand.text}` makes a new "
                        "tensor object, and its `.data` is set on that object only")
    else:
        witness.deny(f"`{'.'.join(operand.root)}` is a {describe(value)}, not a tensor")


TEMPORARY_DATA = _predicate(Predicate(
    Kind.TEMPORARY_DATA, False, "`.data` was set on a tensor object made by the "
    "same statement", at_line=_evaluate_temporary_data))
