"""Confirmation: run a program, and check each static finding against what the run did.

The program runs under the tracer (``aliaslint.tracer``).  The first time a frame of a
project file starts (a ``.py`` file of user code below the working directory: see
``aliaslint.runtime.usercode``), the file is checked statically, before any of its
lines runs; each finding's witness (what the analysis claims: the predicate to evaluate,
the rows where the hazard's operation runs, the operands by name) becomes a ``Witness``
that collects what the run shows.  The source is never read or parsed again.  A line hook
(``sys.settrace``, limited to the code objects that contain such rows) and the tracer's
``Tracer.watch`` seam feed the predicates while the program runs; the tracer's own
runtime findings are matched afterwards.  Hazards that complete at a later line (AL207's
snapshot written afterwards, AL208's argument written by the call) leave a record for
their frame, checked at its later lines by version counters.  Every static finding ends with a status:

* ``confirmed``: the predicate held at least once when one of its rows ran;
* ``refuted``: its rows ran and the predicate never held (a false positive);
* ``not-reached``: none of its rows ran.

Runtime findings no static finding accounts for are returned too (status ``runtime``).
Nothing here calls user code: operands are read from frame locals through plain names and
attribute chains, and the program's exceptions pass through untouched.
"""

from __future__ import annotations

import inspect
import os
import sys
import threading
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import CodeType, FrameType, ModuleType

from aliaslint.config import CliOptions, Resolver
from aliaslint.diagnostics import META_CODES, Diagnostic, Operand
from aliaslint.runtime.predicates import PREDICATES
from aliaslint.runtime.usercode import is_user_file

_WATCHES_OPS = frozenset(name for name, p in PREDICATES.items() if p.watches_ops)
_VIEW_ERROR = "view size is not compatible with input tensor's size and stride"
_LEAF_ERROR = "leaf Variable that requires grad is being used in an in-place operation"


# --- witnesses --------------------------------------------------------------------------------


@dataclass
class Witness:
    """A static finding and what the run has shown about it so far."""

    diagnostic: Diagnostic
    path: str  # absolute, as the running code objects name the file
    rows: frozenset[int]
    kind: str  # the predicate that tests it (aliaslint.runtime.predicates.PREDICATES)
    operands: tuple[Operand, ...] = ()
    comparison: str = ""  # "id", "is", "data_ptr" for AL401/402/403
    storage_class: tuple[str, ...] | None = None  # AL404: `torch.FloatStorage(...)`
    target: tuple[str, ...] | None = None  # AL207: the name the snapshot is assigned to
    related_rows: frozenset[int] = frozenset()  # related rows in the same file
    primary_rows: frozenset[int] = frozenset()  # the rows the finding points at
    ran: bool = False
    confirmed: bool = False
    evidence: str = ""
    negative: str = ""
    # 2: the hazard itself was seen (a wrong answer, the tracer's finding); 1: the premise
    # held (the operands are tensors) but the answer happened to be right on that run.
    strength: int = 0

    def confirm(self, evidence: str, strength: int = 2) -> None:
        if strength > self.strength:
            self.confirmed, self.evidence, self.strength = True, evidence, strength

    def deny(self, reason: str) -> None:
        if not self.negative:
            self.negative = reason

    @property
    def status(self) -> str:
        if self.confirmed:
            return "confirmed"
        return "refuted" if self.ran else "not-reached"

    @property
    def note(self) -> str:
        if self.confirmed:
            return self.evidence
        if self.ran:
            return self.negative or "the line ran and the hazard was not observed"
        return "the line never ran"


def make_witnesses(diagnostics: Iterable[Diagnostic], path: str) -> list[Witness]:
    """A witness for each finding of one file that carries a claim the run can test."""
    witnesses = []
    for diagnostic in diagnostics:
        claim = diagnostic.witness
        if claim is None or diagnostic.location.row < 1:
            continue
        primary = frozenset(range(diagnostic.location.row,
                                  max(diagnostic.end_location.row, diagnostic.location.row) + 1))
        witness = Witness(diagnostic, path, frozenset(claim.rows) or primary, claim.predicate,
                          operands=claim.operands, comparison=claim.comparison)
        if claim.predicate == "storage":
            witness.storage_class = claim.target
        else:
            witness.target = claim.target
        witness.primary_rows = primary
        witness.related_rows = frozenset(
            r.location.row for r in diagnostic.related
            if os.path.abspath(r.filename) == path and r.location.row >= 1)
        witnesses.append(witness)
    return witnesses


# --- reading the running frame without running user code -------------------------------------


class _Opaque(Exception):
    """The value cannot be read without running user code."""


def _lookup(frame: FrameType, chain: tuple[str, ...]):
    name, *attributes = chain
    local = frame.f_locals
    if name in local:
        value = local[name]
    elif name in frame.f_globals:
        value = frame.f_globals[name]
    else:
        builtins = frame.f_builtins
        if name not in builtins:
            raise _Opaque(f"`{name}` is not bound")
        value = builtins[name]
    for attribute in attributes:
        value = _static_getattr(value, attribute)
    return value


def _static_getattr(value, name: str):
    """``getattr`` that never runs a user-defined property or ``__getattr__``."""
    if isinstance(value, ModuleType):
        try:
            return getattr(value, name)
        except AttributeError:
            raise _Opaque(f"no `{name}`") from None
    torch = sys.modules.get("torch")
    if torch is not None:
        if isinstance(value, torch.nn.Module):
            for table in ("_parameters", "_buffers", "_modules"):
                entries = value.__dict__.get(table) or {}
                if name in entries:
                    return entries[name]
        if isinstance(value, torch.Tensor):
            # Attributes of the tensor type itself are torch's own C getters.
            static = inspect.getattr_static(value, name, None)
            if type(static).__name__ == "getset_descriptor":
                return getattr(value, name)
    try:
        static = inspect.getattr_static(value, name)
    except AttributeError:
        raise _Opaque(f"no `{name}`") from None
    if hasattr(type(static), "__get__") and not isinstance(static, (type, ModuleType)):
        raise _Opaque(f"`{name}` is computed")
    return static


def _describe(value) -> str:
    return type(value).__name__


# --- the run ----------------------------------------------------------------------------------


@dataclass
class Confirmation:
    """The outcome of one confirmed run."""

    exit_status: int
    diagnostics: list[Diagnostic]  # static findings with a status, then runtime-only ones
    notes: dict[int, str]  # id(diagnostic) → what the run showed
    files: list[str]  # the project files the program executed (absolute)

    def count(self, status: str) -> int:
        return sum(1 for d in self.diagnostics if d.status == status)

    def note(self, diagnostic: Diagnostic) -> str:
        return self.notes.get(id(diagnostic), "")


@dataclass
class _Session:
    cwd: str
    resolver: Resolver
    tracer: object
    files: dict[str, bool] = field(default_factory=dict)  # path → is a project file
    checked: list[str] = field(default_factory=list)
    witnesses: list[Witness] = field(default_factory=list)
    at_row: dict[tuple[str, int], list[Witness]] = field(default_factory=dict)
    rows_in_file: dict[str, set[int]] = field(default_factory=dict)
    code_hooks: dict[int, tuple[CodeType, bool]] = field(default_factory=dict)
    extra: list[Diagnostic] = field(default_factory=list)
    lock: threading.RLock = field(default_factory=threading.RLock)
    # id(frame) → what earlier lines of that frame recorded for AL207 / AL208.
    pending: dict[int, list[_Pending]] = field(default_factory=dict)
    in_callee: dict[tuple[str, int], list[Witness]] = field(default_factory=dict)

    # -- which files --------------------------------------------------------------------------

    def _is_project_file(self, path: str) -> bool:
        known = self.files.get(path)
        if known is None:
            known = (path.endswith(".py") and is_user_file(path, self.cwd)
                     and os.path.isfile(path))
            self.files[path] = known
            if known:
                self._analyse(path)
        return known

    def _analyse(self, path: str) -> None:
        from aliaslint.engine import check_file

        self.checked.append(path)
        settings = self.resolver.for_file(Path(path))
        diagnostics = check_file(Path(path), path, settings)
        self.extra += [d for d in diagnostics if d.code in META_CODES]
        witnesses = make_witnesses(diagnostics, path)
        for witness in witnesses:
            self.witnesses.append(witness)
            for row in witness.rows:
                self.at_row.setdefault((path, row), []).append(witness)
                self.rows_in_file.setdefault(path, set()).add(row)
            if witness.kind in _WATCHES_OPS:
                for row in witness.rows:
                    self.tracer.watch(path, row, self._on_op)
            if witness.kind == "argument":
                # The write inside the callee, where the finding points: seen there even
                # when no version counter shows it (an argument passed as `x.data`).
                for row in witness.primary_rows:
                    self.in_callee.setdefault((path, row), []).append(witness)
                    self.tracer.watch(path, row, self._on_callee_op)

    # -- the line hook ------------------------------------------------------------------------

    def global_trace(self, frame: FrameType, event: str, arg):
        code = frame.f_code
        entry = self.code_hooks.get(id(code))
        if entry is None:
            entry = self.code_hooks[id(code)] = (code, self._wants(code))
        return self._local_trace if entry[1] else None

    def _wants(self, code: CodeType) -> bool:
        path = os.path.abspath(code.co_filename)
        with self.lock:
            if not self._is_project_file(path):
                return False
            rows = self.rows_in_file.get(path)
            if not rows:
                return False
            return any(line in rows for _, _, line in code.co_lines() if line is not None)

    def _local_trace(self, frame: FrameType, event: str, arg):
        if self.pending and event in ("line", "return", "exception"):
            records = self.pending.get(id(frame))
            if records:
                try:
                    self._follow(frame, event, records)
                except Exception:  # a witness never disturbs the program
                    pass
        if event in ("line", "exception"):
            key = (os.path.abspath(frame.f_code.co_filename), frame.f_lineno)
            witnesses = self.at_row.get(key)
            if witnesses:
                for witness in witnesses:
                    try:
                        if event == "line":
                            self._on_line(witness, frame)
                        else:
                            self._on_exception(witness, arg[1])
                    except Exception:  # a witness never disturbs the program
                        pass
        return self._local_trace

    def _on_line(self, witness: Witness, frame: FrameType) -> None:
        witness.ran = True
        if witness.strength >= 2:
            return
        if witness.kind == "compare":
            _evaluate_comparison(witness, frame)
        elif witness.kind == "storage":
            _evaluate_storage(witness, frame)
        elif witness.kind == "numpy":
            _numpy_pair(witness, frame)
        elif witness.kind == "argument":
            self._remember(frame, _record_arguments(witness, frame))
        elif witness.kind == "snapshot":
            records = self.pending.get(id(frame)) or []
            if not any(r.witness is witness and r.tensors is None for r in records):
                # Read when the statement has finished: at the frame's next line elsewhere.
                self._remember(frame, _Pending(witness, frame.f_code))

    # -- AL207 / AL208: what a line recorded, checked at the frame's later lines ----------

    def _remember(self, frame: FrameType, record: _Pending | None) -> None:
        if record is not None:
            with self.lock:
                self.pending.setdefault(id(frame), []).append(record)

    def _follow(self, frame: FrameType, event: str, records: list[_Pending]) -> None:
        row = frame.f_lineno
        suspended = event == "return" and frame.f_code.co_flags & _SUSPENDS
        finished = event == "return" and not suspended
        keep = []
        for record in records:
            witness = record.witness
            if record.code is not frame.f_code or witness.strength >= 2:
                continue  # a finished frame's record (its id was reused), or nothing to learn
            if witness.kind == "argument":
                _settle_arguments(record)
                continue
            if record.tensors is None:  # the snapshot statement has not finished yet
                if event == "line" and row in witness.rows:
                    keep.append(record)
                    continue
                if event == "exception" and row in witness.rows:
                    continue  # the statement raised: nothing was assigned
                _capture_snapshot(record, frame)
                if record.tensors is None:
                    continue
                if not finished:
                    keep.append(record)
                    continue
            if finished or row in witness.rows or row in witness.related_rows:
                if _check_snapshot(record, frame, event) and not finished:
                    keep.append(record)
            else:
                keep.append(record)
        with self.lock:
            if keep:
                self.pending[id(frame)] = keep
            else:
                self.pending.pop(id(frame), None)

    def _on_exception(self, witness: Witness, error: BaseException) -> None:
        witness.ran = True
        if witness.kind == "leaf" and isinstance(error, RuntimeError) \
                and _LEAF_ERROR in str(error):
            witness.confirm("torch raised \"a leaf Variable that requires grad is being used "
                            "in an in-place operation\" at this line")
        elif witness.kind == "view" and isinstance(error, RuntimeError) \
                and _VIEW_ERROR in str(error):
            witness.confirm("torch raised \"view size is not compatible with input tensor's "
                            "size and stride\" at this line")

    # -- ATen ops at a watched line -----------------------------------------------------------

    def _on_callee_op(self, event) -> None:
        """AL208: an op at the write inside the callee, while the call's line is pending in
        the caller: does it write memory of one of the call's tensor arguments?"""
        witnesses = self.in_callee.get((event.site.filename, event.site.line))
        if not witnesses:
            return
        try:
            written = _written(event)
            if not written:
                return
            with self.lock:
                records = [r for rs in self.pending.values() for r in rs
                           if any(r.witness is w for w in witnesses)
                           and r.witness.strength < 2]
            for record in records:
                for label, ref in record.roots:
                    argument = ref()
                    if argument is not None and any(
                            t is argument or _overlaps(t, argument) for t in written):
                        record.witness.confirm(
                            f"the in-place op at line {event.site.line}, inside the callee, "
                            f"wrote the memory of its argument `{label}`")
                        break
        except Exception:  # a witness never disturbs the program
            pass

    def _on_op(self, event) -> None:
        witnesses = self.at_row.get((event.site.filename, event.site.line))
        if not witnesses:
            return
        try:
            for witness in witnesses:
                if witness.kind == "view" and event.op.overloadpacket.__name__ == "view":
                    witness.ran = True
                    source = event.args[0] if event.args else None
                    if hasattr(source, "is_contiguous") and not source.is_contiguous():
                        witness.confirm("`view` received a non-contiguous tensor (it did not "
                                        "raise for these shapes)", strength=1)
            written = _written(event)
            if not written:
                return
            frame = _frame_of(event.site.code)
            for witness in witnesses:
                witness.ran = True
                if witness.kind == "leaf":
                    _leaf_write(witness, written)
                elif witness.kind == "clobbered":
                    _stale_alias(witness, written, frame)
                elif witness.kind in ("shared-write", "numpy"):
                    _shared_write(witness, written, frame)
                elif witness.kind == "copy-write":
                    _lost_write(witness, written, frame)
                elif witness.kind == "source-write":
                    _source_write(witness, written, frame)
                elif witness.kind == "replicated" and witness.strength < 2:
                    _replicated_write(witness, written, frame)
        except Exception:  # a witness never disturbs the program
            pass

    # -- afterwards ---------------------------------------------------------------------------

    def settle(self, runtime: list[Diagnostic]) -> list[Diagnostic]:
        """Match the tracer's runtime findings (at a finding's rows, or at its related rows in
        the same file: the write inside a helper the finding's call runs); return those no
        static finding accounts for."""
        unmatched = []
        for finding in runtime:
            path = os.path.abspath(finding.filename)
            row = finding.location.row
            matched = False
            for witness in self.witnesses:
                if witness.kind in ("compare", "storage") or witness.path != path:
                    continue
                code = witness.diagnostic.code
                if not (finding.code == code
                        or finding.code == "AL101" and witness.kind in ("saved", "clobbered",
                                                                        "leaf")):
                    continue
                if row in witness.rows:
                    witness.ran = True
                    witness.confirm(f"the tracer saw it: {finding.message}")
                elif row in {r.location.row for r in witness.diagnostic.related
                             if os.path.abspath(r.filename) == path}:
                    witness.ran = True
                    witness.confirm(f"the tracer saw it at related line {row}: "
                                    f"{finding.message}")
                else:
                    continue
                matched = True
            if not matched:
                unmatched.append(finding)
        return unmatched


def _written(event) -> list:
    """The tensors the op's schema marks as written (``Tensor(a!)``)."""
    import torch

    written = []
    for index, argument in enumerate(event.op._schema.arguments):
        if argument.alias_info is None or not argument.alias_info.is_write:
            continue
        if argument.kwarg_only or index >= len(event.args):
            value = event.kwargs.get(argument.name)
        else:
            value = event.args[index]
        if isinstance(value, torch.Tensor):
            written.append(value)
        elif isinstance(value, (list, tuple)):
            written += [v for v in value if isinstance(v, torch.Tensor)]
    return written


def _frame_of(code: CodeType) -> FrameType | None:
    frame = sys._getframe(1)
    while frame is not None and frame.f_code is not code:
        frame = frame.f_back
    return frame


def _bindings(frame: FrameType | None) -> list[tuple[str, object]]:
    """(name, value) of the frame's locals that hold tensors or ndarrays."""
    if frame is None:
        return []
    import torch

    numpy = sys.modules.get("numpy")
    array = numpy.ndarray if numpy is not None else ()
    return [(name, value) for name, value in list(frame.f_locals.items())
            if isinstance(value, torch.Tensor) or (array and isinstance(value, array))]


def _overlaps(a, b) -> bool:
    from aliaslint.memory import shares_memory

    try:
        return shares_memory(a, b)
    except (RuntimeError, NotImplementedError, TypeError, ValueError):
        return False


def _leaf_write(witness: Witness, written: list) -> None:
    import torch

    for tensor in written:
        if tensor.is_leaf and tensor.requires_grad and torch.is_grad_enabled():
            witness.confirm("an in-place op wrote a leaf tensor that requires grad with grad "
                            "mode on")
            return
    witness.deny("the in-place op at this line wrote no leaf that requires grad "
                 "(grad mode off, or not a leaf)")


def _holds(value, tensor) -> bool:
    """Is ``value`` the tensor itself, or memory overlapping it?"""
    return value is tensor or _overlaps(value, tensor)


def _holders(bindings, tensor) -> list[str]:
    """Names of the frame whose values are ``tensor`` or overlap its memory."""
    return [name for name, value in bindings if _holds(value, tensor)]


def _stale_alias(witness: Witness, written: list, frame: FrameType | None) -> None:
    """AL105: the write hits memory another name of the same frame still holds."""
    bindings = _bindings(frame)
    for tensor in written:
        holders = _holders(bindings, tensor)
        if len(holders) >= 2:
            names = ", ".join(f"`{name}`" for name in holders)
            witness.confirm(f"the in-place write hit memory that {names} all still hold")
            return
    witness.deny("the in-place write hit no tensor another live name holds, and nothing "
                 "autograd saved")


def _shared_write(witness: Witness, written: list, frame: FrameType | None) -> None:
    bindings = _bindings(frame)
    for tensor in written:
        for name, value in bindings:
            if value is not tensor and _overlaps(value, tensor):
                witness.confirm(f"the in-place write hit memory that `{name}` "
                                f"(a live {_describe(value)}) shares")
                return
    witness.deny("no in-place write at this line hit memory another live tensor or array "
                 "shares")


def _source_write(witness: Witness, written: list, frame: FrameType | None) -> None:
    """AL205: the write reached the memory of the call's source (it returned its source)."""
    for operand in witness.operands:
        try:
            value = _lookup(frame, operand.root) if frame is not None else None
        except Exception:
            continue
        for tensor in written:
            if _holds(value, tensor):
                witness.confirm(f"the call returned `{operand.text}` itself or a view of it, "
                                "and the in-place write changed its memory")
                return
    witness.deny("the call copied on this run: the in-place write did not reach its source")


def _replicated_write(witness: Witness, written: list, frame: FrameType | None) -> None:
    """AL206: the written tensor is (or shares memory with) two or more entries of one list,
    tuple or dict the frame holds."""
    import torch

    if frame is None:
        return
    for name, container in list(frame.f_locals.items()):
        if not isinstance(container, (list, tuple, dict)):
            continue
        entries = _entries(container, name, torch.Tensor)
        if len(entries) < 2:
            continue
        for tensor in written:
            hits = [(label, entry) for label, entry in entries
                    if entry is tensor or _same_memory(entry, tensor)]
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


_MAX_ENTRIES = 4096


def _items(container) -> list[tuple[object, object]]:
    """(key, value) pairs of a list, tuple or dict, read without running user code."""
    if isinstance(container, dict):
        return list(dict.items(container))[:_MAX_ENTRIES]
    if isinstance(container, list):
        return list(enumerate(list.__getitem__(container, slice(0, _MAX_ENTRIES))))
    return list(enumerate(tuple.__getitem__(container, slice(0, _MAX_ENTRIES))))


def _entries(container, name: str, tensor_type, depth: int = 2) -> list[tuple[str, object]]:
    """The tensors of a container and of the lists, tuples and dicts in it (``[[t] * n] * m``),
    each with its place (``sums[2]``, ``counts['cat']``, ``grid[0][1]``)."""
    found = []
    for key, value in _items(container):
        label = f"{name}[{key!r}]"
        if isinstance(value, tensor_type):
            found.append((label, value))
        elif depth > 1 and isinstance(value, (list, tuple, dict)):
            found += _entries(value, label, tensor_type, depth - 1)
        if len(found) >= _MAX_ENTRIES:
            break
    return found


def _same_memory(a, b) -> bool:
    try:
        return (a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
                and _overlaps(a, b))
    except (RuntimeError, NotImplementedError, TypeError, ValueError, AttributeError):
        return False


# --- AL207 / AL208: records a line leaves for its frame's later lines ------------------------

# Code flags of frames that `return` on every `yield` / `await` and resume later.
_SUSPENDS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


@dataclass
class _Pending:
    """What a line of one frame recorded: the tensors (label, weak reference, version) and,
    for a snapshot, the object its name holds.  ``tensors`` is None for a snapshot whose
    statement has not finished yet."""

    witness: Witness
    code: CodeType
    tensors: list[tuple[str, weakref.ref, int]] | None = None
    holder: weakref.ref | None = None
    holder_id: int = 0
    holder_type: type | None = None
    roots: list[tuple[str, weakref.ref]] = field(default_factory=list)  # AL208 arguments

    def holds(self, value) -> bool:
        if self.holder is not None:
            return value is self.holder()
        return id(value) == self.holder_id and type(value) is self.holder_type


def _versioned(label: str, tensor) -> tuple[str, weakref.ref, int] | None:
    try:
        return label, weakref.ref(tensor), tensor._version
    except (RuntimeError, TypeError):  # inference tensors have no version counter
        return None


def _record_arguments(witness: Witness, frame: FrameType) -> _Pending | None:
    """AL208, when the call's line starts: the version of every tensor argument that is a
    plain name or attribute chain (or a view of one: views share their base's counter)."""
    import torch

    tensors, roots = [], []
    for operand in witness.operands:
        if operand.root is None:
            continue
        try:
            value = _lookup(frame, operand.root)
        except Exception:
            continue
        label = ".".join(operand.root)
        if isinstance(value, torch.Tensor):
            candidates = [(label, value)]
        elif isinstance(value, (list, tuple, dict)):
            candidates = _entries(value, label, torch.Tensor, depth=1)
        else:
            candidates = []
        roots += [(name, weakref.ref(t)) for name, t in candidates]
        if ".data" not in operand.derived:  # `.data` has a version counter of its own
            tensors += filter(None, (_versioned(name, t) for name, t in candidates))
    if not roots:
        witness.deny("no argument of the call is a tensor that can be read by name")
        return None
    return _Pending(witness, frame.f_code, tensors, roots=roots)


def _settle_arguments(record: _Pending) -> None:
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


def _snapshot_tensors(value, label: str) -> list[tuple[str, object]]:
    """The tensors a snapshot holds: a tensor, a module's parameters and buffers, the values
    of a (state) dict, the entries of a list or tuple; nested containers too."""
    import torch

    found: list[tuple[str, object]] = []
    seen: set[int] = set()

    def visit(item, place: str, depth: int) -> None:
        if len(found) >= _MAX_ENTRIES or depth > 32 or id(item) in seen:
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
            for key, member in _items(item):
                visit(member, f"{place}[{key!r}]", depth + 1)

    visit(value, label, 0)
    return found


def _capture_snapshot(record: _Pending, frame: FrameType) -> None:
    """AL207, once the snapshot statement has finished: what its name now holds.

    Tensors of the frame over exactly the same memory are followed too: ``prev = w.data``
    has a version counter of its own, so writes through ``w`` show only on ``w``'s."""
    import torch

    witness = record.witness
    if witness.target is None:
        witness.deny("the name the snapshot is assigned to could not be found in the source")
        return
    name = ".".join(witness.target)
    try:
        value = _lookup(frame, witness.target)
    except Exception:
        witness.deny(f"`{name}` could not be read without running user code")
        return
    held = _snapshot_tensors(value, name)
    if not held:
        witness.deny(f"`{name}` is a {_describe(value)} that holds no tensor")
        return
    keys = {}
    for label, tensor in held:
        try:
            keys[_layout(tensor)] = label
        except (RuntimeError, NotImplementedError, TypeError, ValueError):
            pass
    for local, tensor in _bindings(frame):
        if not isinstance(tensor, torch.Tensor) or any(tensor is t for _, t in held):
            continue
        try:
            same = keys.get(_layout(tensor))
        except (RuntimeError, NotImplementedError, TypeError, ValueError):
            continue
        if same is not None:
            held.append((f"{local}` (over the memory of `{same}`)", tensor))
    shown = [(label if label.endswith(")") else f"{label}`", t) for label, t in held]
    record.tensors = [entry for entry in (_versioned(f"`{label}", t) for label, t in shown)
                      if entry]
    try:
        record.holder = weakref.ref(value)
    except TypeError:  # a plain dict or list: known by identity while it is bound
        record.holder_id, record.holder_type = id(value), type(value)


def _layout(tensor) -> tuple:
    return (tensor.data_ptr(), tuple(tensor.shape), tuple(tensor.stride()), tensor.dtype)


def _check_snapshot(record: _Pending, frame: FrameType, event: str) -> bool:
    """AL207 at a related line, the snapshot line again, or the frame's return: was a tensor
    the snapshot holds written in place while its name still held it?  False once the
    record is settled."""
    witness = record.witness
    name = ".".join(witness.target or ())
    try:
        current = _lookup(frame, witness.target)
    except Exception:
        current = _check_snapshot  # unbound: holds nothing the record knows
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


def _numpy_pair(witness: Witness, frame: FrameType) -> None:
    """AL301, a write from the NumPy side (invisible to ATen): when the line starts, a live
    array and a live tensor of the frame share memory."""
    import torch

    bindings = _bindings(frame)
    tensors = [(n, v) for n, v in bindings if isinstance(v, torch.Tensor)]
    for name, array in bindings:
        if isinstance(array, torch.Tensor):
            continue
        for other, tensor in tensors:
            if _overlaps(array, tensor):
                witness.confirm(f"when the line ran, the array `{name}` and the tensor "
                                f"`{other}` shared memory")
                return
    witness.deny("no live array and tensor shared memory when the line ran, and no "
                 "in-place write hit shared memory")


def _lost_write(witness: Witness, written: list, frame: FrameType | None) -> None:
    """AL204: the write lands in a temporary copy that no live name of the frame holds."""
    bindings = _bindings(frame)
    for tensor in written:
        holders = _holders(bindings, tensor)
        if not holders:
            witness.confirm("the in-place write hit a temporary tensor that no live name "
                            "holds: the written values are lost")
            return
    witness.deny("every in-place write at this line hit memory a live name holds")


def _evaluate_comparison(witness: Witness, frame: FrameType) -> None:
    import torch

    if not witness.operands:
        witness.deny("the comparison's operands could not be found in the source")
        return
    values = []
    for operand in witness.operands:
        if operand.root is None:
            values.append(None)
            continue
        try:
            values.append(_lookup(frame, operand.root))
        except _Opaque:
            values.append(None)
        except Exception:
            values.append(None)
    # Recognising the deprecated class is the point here, not using it.
    storages = (torch.TypedStorage, torch.UntypedStorage)  # noqa: AL404
    for operand, value in zip(witness.operands, values):
        if value is not None and not isinstance(value, (torch.Tensor, *storages)):
            root = ".".join(operand.root)
            witness.deny(f"`{root}` is a {_describe(value)} at run time, not a tensor")
            return
    known = [(o, v) for o, v in zip(witness.operands, values) if v is not None]
    if not known:
        witness.deny("no operand could be read without running user code")
        return
    derived = [o for o, _ in known if o.derived]
    tensors = [v for _, v in known if isinstance(v, torch.Tensor)]
    if len(known) == 2 and len(tensors) == 2 and not derived:
        (left, a), (right, b) = known
        if witness.comparison == "data_ptr":
            same = a.data_ptr() == b.data_ptr()
            test = "`data_ptr()` equality"
        else:
            same = a is b
            test = "identity" if witness.comparison == "is" else "`id()` equality"
        shares = _overlaps(a, b) or (
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
    kinds = ", ".join(f"`{o.text}` is a {_describe(v)}" for o, v in known)
    witness.confirm(f"{kinds}: a memory test by object identity or address", strength=1)


def _evaluate_storage(witness: Witness, frame: FrameType) -> None:
    import torch

    if witness.storage_class is not None:
        try:
            value = _lookup(frame, witness.storage_class)
        except Exception:
            witness.deny(f"`{'.'.join(witness.storage_class)}` could not be read")
            return
        if isinstance(value, type) and issubclass(value, torch.TypedStorage):  # noqa: AL404
            witness.confirm(f"`{'.'.join(witness.storage_class)}` is the typed storage class "
                            f"`{value.__name__}`")
        else:
            witness.deny(f"`{'.'.join(witness.storage_class)}` is a {_describe(value)}, not "
                         "a typed storage class")
        return
    if not witness.operands or witness.operands[0].root is None:
        witness.deny("the receiver of `.storage()` could not be read without running user "
                     "code")
        return
    operand = witness.operands[0]
    try:
        value = _lookup(frame, operand.root)
    except Exception:
        witness.deny(f"`{operand.text}` could not be read without running user code")
        return
    if isinstance(value, torch.Tensor):
        witness.confirm(f"`{operand.text}` is a tensor: `.storage()` builds a "
                        "`TypedStorage`")
    else:
        witness.deny(f"`{operand.text}` is a {_describe(value)}, not a tensor")


# --- entry point ------------------------------------------------------------------------------


def confirm(*, script: str | None = None, module: str | None = None, args: Iterable[str] = (),
            cli: CliOptions = CliOptions(), cwd: str | None = None) -> Confirmation:
    """Run ``script`` (or ``-m module``) with ``args`` and give every static finding of the
    project files it executes a status.  Paths in the findings are absolute."""
    from aliaslint.tracer import run_program, trace

    cwd = os.path.abspath(cwd or os.getcwd())
    tracer = trace()
    session = _Session(cwd, Resolver(cli, Path(cwd)), tracer)
    previous = sys.gettrace()
    previous_threads = threading.gettrace() if hasattr(threading, "gettrace") else None
    threading.settrace(session.global_trace)
    sys.settrace(session.global_trace)
    try:
        status = run_program(tracer, script=script, module=module, args=list(args))
    finally:
        sys.settrace(previous)
        threading.settrace(previous_threads)
    runtime = session.settle(tracer.findings)
    notes: dict[int, str] = {}
    diagnostics: list[Diagnostic] = []
    for witness in session.witnesses:
        diagnostic = replace(witness.diagnostic, status=witness.status)
        notes[id(diagnostic)] = witness.note
        diagnostics.append(diagnostic)
    diagnostics += session.extra
    diagnostics.sort(key=lambda d: d.sort_key)
    diagnostics += runtime
    return Confirmation(status, diagnostics, notes, list(session.checked))
