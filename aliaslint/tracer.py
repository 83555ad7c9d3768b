"""The runtime half: run code under observation and report alias hazards as they happen.

``trace()`` is a context manager.  While it is open, a ``TorchDispatchMode`` sees
every ATen operation together with its schema, whose alias annotations say which
arguments it writes (``Tensor(a!)``) and which outputs are views of an input
(``Tensor(a)``); no operator list is written by hand.  Saved-tensor hooks
(``torch.autograd.graph.saved_tensors_hooks``) record, for every tensor autograd
saves, its storage, its version counter and the user line that saved it.
Storages are identified by ``untyped_storage().data_ptr()``; tensors the user
made are only ever held through weak references, and no tensor data is read,
copied or synchronised.

While saved-tensor hooks are installed autograd skips its own version check when
backward unpacks a saved tensor, so the unpack hook performs that check and raises
the very ``RuntimeError`` autograd would, with the saving and the writing line
appended.

Findings are ``Diagnostic``s with ``status="runtime"``, one per (code, location).
torch is imported when a trace starts, never when this module is imported.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import FrameType, ModuleType
from typing import TYPE_CHECKING, Any

from aliaslint.diagnostics import Diagnostic, Related
from aliaslint.runtime.dispatch import (
    OpEvent,
    OpFacts,
    OpInputs,
    OpSite,
    layout_of,
    learn,
    tensors_in,
    written,
)
from aliaslint.runtime.program import run_program
from aliaslint.runtime.sites import Site, user_site
from aliaslint.runtime.usercode import is_user_file

if TYPE_CHECKING:
    from torch.utils._python_dispatch import TorchDispatchMode

# The tracer's API, with the parts that live in aliaslint.runtime.

# What torch says when an in-place op writes a leaf that requires grad with grad mode on.
LEAF_ERROR = "a leaf Variable that requires grad is being used in an in-place operation"

__all__ = ["OpEvent", "Tracer", "forward_op_name", "run_program", "trace"]


# --- what autograd saved ---------------------------------------------------------------------


class _Saved:
    """The object autograd stores instead of a saved tensor while a trace is open.

    It lives exactly as long as autograd's saved variable (the graph owns it), so
    "this record is alive" means "a backward pass may still read this tensor".
    """

    __slots__ = ("tensor", "version", "site", "requires_grad", "is_output", "node_name",
                 "output_nr", "modified_at", "__weakref__")

    def __init__(self, tensor, version, site, requires_grad, is_output, node_name, output_nr):
        # For an input this is the original tensor, which autograd holds anyway; for an
        # output it is a detached alias (same storage and version counter), because the
        # original refers to the node that owns this record and would make a cycle.
        self.tensor = tensor
        self.version = version
        self.site: Site | None = site
        self.requires_grad = requires_grad
        self.is_output = is_output
        self.node_name = node_name
        self.output_nr = output_nr
        self.modified_at: Site | None = None


def forward_op_name(node_name: str) -> str:
    """``SigmoidBackward0`` → ``Sigmoid``, ``AddBackward1`` → ``Add1``, as autograd names them."""
    position = node_name.rfind("Backward")
    if position < 0:
        return node_name
    suffix = node_name[position + len("Backward"):]
    if not suffix.isdigit() and suffix:
        return node_name
    return node_name[:position] + ("" if suffix in ("", "0") else suffix)


@dataclass
class _PendingWrite:
    """A write to a saved storage; whether autograd saw it is known once the op returns."""

    record: _Saved
    version_before: int
    writer_requires_grad: bool
    overlaps: bool
    op: str
    site: Site | None
    writer_layout: tuple


@dataclass
class _ViewWrite:
    """A write through a named view whose base has not been read since."""

    base: weakref.ref
    view: weakref.ref
    op: str
    site: Site
    view_site: Site


@dataclass
class _NumpyShare:
    array: weakref.ref
    site: Site | None
    # References torch's own storages hold on the array (one per torch.from_numpy call);
    # None for arrays made by Tensor.numpy(), which torch does not hold.
    torch_refs: int | None

    def user_holds_array(self) -> bool:
        array = self.array()
        if array is None:
            return False
        if self.torch_refs is None:
            return True
        # getrefcount's argument and the local name, then torch's storages.
        if sys.getrefcount(array) - 2 - self.torch_refs > 0:
            return True
        base = getattr(array, "base", None)
        while base is not None and hasattr(base, "__array_interface__"):
            # The argument, the local name and the child's ``.base``.
            if sys.getrefcount(base) - 3 > 0:
                return True
            base = getattr(base, "base", None)
        return False


LineCallback = Callable[[OpEvent], None]


# A trace of a long program makes many views; their creation sites are kept for the
# most recent ones only.
_MAX_VIEW_SITES = 1 << 14


# --- the tracer ------------------------------------------------------------------------------


_ACTIVE: list[Tracer] = []
_ACTIVE_LOCK = threading.Lock()


class Tracer:
    """Observes the code run inside ``with trace() as t:``; ``t.findings`` lists the hazards."""

    def __init__(self) -> None:
        self._findings: dict[tuple, Diagnostic] = {}
        self._facts: dict[Any, OpFacts | None] = {}
        self._saved: dict[int, dict[int, weakref.ref]] = {}
        self._numpy: dict[int, _NumpyShare] = {}
        self._view_sites: dict[tuple, tuple[Site | None, str]] = {}
        self._view_writes: dict[int, _ViewWrite] = {}
        self._unresolved: list[_PendingWrite] = []
        self._watches: dict[tuple[str, int], list[LineCallback]] = {}
        self._local = threading.local()
        self._lock = threading.RLock()
        # True while any pending state asks every op (not just writes and views) to be looked at.
        self._attentive = False
        self._state = "new"
        # __enter__ adds the torch module, the dispatch mode and the saved-tensor hooks.
        self._previous_thread_profile: Callable[[FrameType, str, Any], object] | None = None

    # -- public ---------------------------------------------------------------------------

    @property
    def findings(self) -> list[Diagnostic]:
        """The runtime findings so far, one per (code, location), in source order."""
        with self._lock:
            self._resolve()
            return sorted(self._findings.values(), key=lambda d: d.sort_key)

    def watch(self, filename: str, line: int, callback: LineCallback) -> None:
        """Call ``callback(event)`` for every ATen op that user code runs at ``filename:line``.

        The hook a static finding's witness is evaluated through: the finding names a
        line and a predicate, and the callback checks the predicate on the live tensors.
        Every op is attributed while any watch is set, so tracing is slower then.
        """
        key = (os.path.abspath(filename), line)
        with self._lock:
            self._watches.setdefault(key, []).append(callback)
            self._update_attention()

    def __enter__(self) -> Tracer:
        if self._state != "new":
            raise RuntimeError("a Tracer can be entered only once; call aliaslint.trace() again")
        import torch
        from torch.utils._python_dispatch import TorchDispatchMode  # noqa: F401

        self._torch = torch
        self._tensor_type = torch.Tensor
        self._mode = _mode_type()(self)
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
        self._hooks.__enter__()
        try:
            self._mode.__enter__()
        except BaseException:
            self._hooks.__exit__(None, None, None)
            raise
        self._state = "open"
        _activate(self)
        self._previous_thread_profile = threading.getprofile()
        threading.setprofile(self._start_thread)
        return self

    def __exit__(self, *exc_info) -> None:
        self._leaf_error(exc_info[1])
        threading.setprofile(self._previous_thread_profile)
        _deactivate(self)
        self._state = "closed"
        try:
            self._mode.__exit__(*exc_info)
        finally:
            self._hooks.__exit__(*exc_info)
        with self._lock:
            self._resolve()

    # -- threads --------------------------------------------------------------------------

    def _start_thread(self, frame: FrameType, event: str, arg: object) -> None:
        """Runs once in each thread started while the trace is open and joins it to the trace."""
        sys.setprofile(self._previous_thread_profile)
        if self._state != "open":
            return
        from torch.utils._python_dispatch import _push_mode

        self._torch._C._autograd._push_saved_tensors_default_hooks(self._pack, self._unpack)
        # Threads outlive the trace sometimes; a closed tracer passes every op through.
        _push_mode(self._mode)

    # -- findings -------------------------------------------------------------------------

    def _report(self, code: str, site: Site | None, message: str,
                related: Sequence[tuple[str, Site | None]] = ()) -> None:
        if site is None:
            return
        start, end = site.span()
        key = (code, site.filename, start)
        if key in self._findings:
            return
        spans = []
        for label, where in related:
            if where is None:
                continue
            where_start, where_end = where.span()
            spans.append(Related(message=label, filename=where.filename,
                                 location=where_start, end_location=where_end))
        self._findings[key] = Diagnostic(
            code=code, message=message, filename=site.filename, location=start,
            end_location=end, related=tuple(spans), status="runtime",
        )

    def _leaf_error(self, error: BaseException | None) -> None:
        """AL102 at run time: torch refused an in-place write to a leaf that requires grad.
        It refuses before the op is dispatched, so the error itself is the evidence; its
        innermost user frame is the write.  (A write through `.data` or `.detach()` is
        allowed, and is AL103/AL104's matter when autograd still needs the tensor.)"""
        if not isinstance(error, RuntimeError) or LEAF_ERROR not in str(error):
            return
        site = None
        tb = error.__traceback__
        while tb is not None:
            code = tb.tb_frame.f_code
            if is_user_file(code.co_filename):
                filename = code.co_filename
                if not filename.startswith("<"):
                    filename = os.path.abspath(filename)
                site = Site(filename, tb.tb_lineno, code, tb.tb_lasti)
            tb = tb.tb_next
        self._report("AL102", site, "an in-place write to a leaf tensor that requires grad, "
                     "with grad mode on: torch raised \"" + LEAF_ERROR + "\" · write it inside "
                     "`torch.no_grad()`")

    def _reported(self, code: str, site: Site | None) -> bool:
        return site is None or (code, site.filename, site.span()[0]) in self._findings

    def _update_attention(self) -> None:
        self._attentive = bool(self._view_writes or self._unresolved or self._watches)

    # -- the dispatch mode's work ---------------------------------------------------------

    def _observe(self, op, facts: OpFacts | None, args: tuple, kwargs: dict):
        """Everything but the fast path: writes, views, pending reads, watches."""
        torch = self._torch
        if self._state != "open" or torch.compiler.is_compiling():
            return op(*args, **kwargs)
        tensor_type = self._tensor_type
        with self._lock:
            if self._unresolved:
                self._resolve()
            writes = written(facts, args, kwargs, tensor_type)
            written_ids = {id(w) for w in writes}
            if self._view_writes and not (facts is not None and facts.makes_view):
                self._check_reads(args, kwargs, written_ids)
            if writes and facts is not None:
                site = OpSite()
                inputs = OpInputs([t for t in tensors_in((*args, *kwargs.values()), tensor_type)
                                    if id(t) not in written_ids])
                for tensor in writes:
                    try:
                        self._before_write(facts.name, tensor, inputs, site)
                    except (RuntimeError, NotImplementedError, TypeError, ValueError):
                        # Tensors without plain storage (sparse, nested, subclasses) are skipped.
                        pass
            self._update_attention()
        result = op(*args, **kwargs)
        if facts is not None and facts.makes_view:
            self._record_views(facts.name, args, result)
        if self._watches:
            where = user_site()
            if where is not None:
                for callback in self._watches.get((where.filename, where.line), ()):
                    callback(OpEvent(op, args, kwargs, result, where))
        return result

    def _check_reads(self, args, kwargs, written_ids) -> None:
        """AL201: does this op read the base of a view written earlier?"""
        from aliaslint.memory import shares_memory

        for tensor in tensors_in((*args, *kwargs.values()), self._tensor_type):
            if id(tensor) in written_ids:
                continue
            pending = self._view_writes.get(id(tensor))
            if pending is not None and pending.base() is tensor:
                self._report_view_write(id(tensor), pending)
                continue
            if not tensor._is_view():
                continue
            base = tensor._base
            pending = self._view_writes.get(id(base))
            if pending is None or pending.base() is not base:
                continue
            view = pending.view()
            if view is not None and view is not tensor and shares_memory(view, tensor):
                self._report_view_write(id(base), pending)

    def _report_view_write(self, key: int, pending: _ViewWrite) -> None:
        del self._view_writes[key]
        self._report(
            "AL201", pending.site,
            f"in-place `{pending.op}` through a view also changes its base, "
            "which is read afterwards",
            [("view created here", pending.view_site), ("base read here", user_site())],
        )

    def _before_write(self, op: str, tensor, inputs: OpInputs, site: OpSite) -> None:
        torch = self._torch
        storage = tensor.untyped_storage().data_ptr()
        if storage == 0:
            return
        self._check_overlap(op, tensor, storage, inputs, site)

        records = [r for r in (ref() for ref in tuple(self._saved.get(storage, {}).values()))
                   if r is not None]
        if records:
            from aliaslint.memory import shares_memory

            layout = layout_of(tensor)
            for record in records:
                self._unresolved.append(_PendingWrite(
                    record, record.tensor._version, tensor.requires_grad,
                    shares_memory(tensor, record.tensor), op, site(), layout,
                ))

        share = self._numpy.get(storage)
        if share is not None and share.user_holds_array() and not self._reported("AL301", site()):
            self._report(
                "AL301", site(),
                f"in-place `{op}` writes memory shared with a NumPy array that is still alive; "
                "the array changes too",
                [("shared with NumPy here", share.site)],
            )

        if tensor._is_view():
            self._remember_view_write(op, tensor, site)
        # A write through the base itself replaces what the view wrote: nothing left to warn.
        self._view_writes.pop(id(tensor), None)

    def _remember_view_write(self, op: str, view, site: OpSite) -> None:
        """AL201, first half: a write through a view kept under a name of its own."""
        created = self._view_sites.get(layout_of(view))
        base = view._base
        if created is None or created[0] is None or base is None:
            return
        where = site()
        # A view made and written on one line (`x[:, 0] = 0`, `x[i].zero_()`) is how code
        # updates part of a tensor on purpose; a view made on another line was given a name.
        if where is None or (created[0].filename, created[0].line) == (where.filename, where.line):
            return
        if self._reported("AL201", where):
            return
        key = id(base)
        self._view_writes[key] = _ViewWrite(
            weakref.ref(base, functools.partial(self._forget_view_write, key)),
            weakref.ref(view), op, where, created[0],
        )

    def _forget_view_write(self, key: int, _ref) -> None:
        pending = self._view_writes.get(key)
        if pending is not None and pending.base() is None:
            del self._view_writes[key]

    def _check_overlap(self, op: str, tensor, storage: int, inputs: OpInputs,
                       site: OpSite) -> None:
        """AL203: the destination overlaps itself, or an input overlaps it partially."""
        torch = self._torch
        if torch._debug_has_internal_overlap(tensor) == 1:
            if self._reported("AL203", site()):
                return
            created = self._view_sites.get(layout_of(tensor))
            self._report(
                "AL203", site(),
                f"in-place `{op}` writes a tensor in which several elements share one memory "
                "location (a stride of 0, as `expand` makes); clone it first",
                [(f"`{created[1]}` made it here", created[0])] if created else [],
            )
            return
        # Two distinct tensors overlap partially only if one of them is a view.
        if not inputs.tensors or not (tensor._is_view() or inputs.any_view()):
            return
        from aliaslint.memory import shares_memory

        layout = None
        for other in inputs.on_storage(storage):
            layout = layout or layout_of(tensor)
            if layout_of(other) == layout or not shares_memory(other, tensor):
                continue
            if self._reported("AL203", site()):
                return
            created = self._view_sites.get(layout_of(other))
            self._report(
                "AL203", site(),
                f"in-place `{op}` reads an input that partially overlaps the memory it "
                "writes; the result depends on the order elements are visited",
                [("overlapping view created here", created[0])] if created else [],
            )
            return

    def _record_views(self, op: str, args: tuple, result) -> None:
        # Views autograd makes while running backward cannot be named by user code, and a
        # detached alias matters only for a tensor that requires grad.
        if (self._torch._C._current_autograd_node() is not None
                or op == "detach" and not (args and getattr(args[0], "requires_grad", False))
                or getattr(self._local, "packing", False)):
            return
        outputs = result if isinstance(result, (list, tuple)) else (result,)
        site = None
        for output in outputs:
            if not isinstance(output, self._tensor_type):
                continue
            try:
                key = layout_of(output)
            except (RuntimeError, NotImplementedError):
                continue
            if site is None:
                site = user_site()
            sites = self._view_sites
            if len(sites) >= _MAX_VIEW_SITES:
                sites.clear()
            sites[key] = (site, op)

    def _resolve(self) -> None:
        """Classify the writes to saved storages, now that autograd has bumped versions."""
        pending, self._unresolved = self._unresolved, []
        for write in pending:
            record = write.record
            if record.tensor._version != write.version_before:
                if record.modified_at is None:
                    record.modified_at = write.site
                if record.requires_grad and not write.writer_requires_grad:
                    detach = self._view_sites.get(write.writer_layout)
                    self._report(
                        "AL104", write.site,
                        f"in-place `{write.op}` on a `.detach()` alias changes a tensor that "
                        "autograd saved for backward; backward will raise \"modified by an "
                        "inplace operation\"",
                        [("saved for backward here", record.site),
                         ("detached here", detach[0] if detach and detach[1] == "detach"
                          else None)],
                    )
                else:
                    saver = f" by `{forward_op_name(record.node_name)}`" if record.is_output else ""
                    self._report(
                        "AL101", write.site,
                        f"in-place `{write.op}` writes a tensor that autograd saved for "
                        f"backward{saver}; backward will raise \"modified by an inplace "
                        "operation\"",
                        [("saved for backward here", record.site)],
                    )
            elif write.overlaps:
                self._report(
                    "AL103", write.site,
                    f"in-place `{write.op}` through an alias with its own version counter "
                    "(`.data`) changes a tensor saved for backward; autograd cannot notice "
                    "and computes the gradient from the new values",
                    [("saved for backward here", record.site)],
                )
        self._update_attention()

    # -- saved-tensor hooks ---------------------------------------------------------------

    def _pack(self, tensor):
        if self._state != "open":
            return tensor
        try:
            storage = tensor.untyped_storage().data_ptr()
            version = tensor._version
        except (RuntimeError, NotImplementedError):
            return tensor
        autograd = self._torch._C._autograd
        node = tensor.grad_fn
        # Autograd creates an op's node before it saves the inputs and saves the outputs
        # right after; an output is thus a tensor whose node is the newest one.
        is_output = node is not None and node._sequence_nr() == autograd._get_sequence_nr() - 1
        if is_output:
            self._local.packing = True
            try:
                kept = tensor.detach()
            finally:
                self._local.packing = False
        else:
            kept = tensor
        record = _Saved(kept, version, user_site(), tensor.requires_grad, is_output,
                        node.name() if node is not None else "", tensor.output_nr)
        with self._lock:
            records = self._saved.setdefault(storage, {})
            records[id(record)] = weakref.ref(
                record, functools.partial(self._forget_saved, storage, id(record)))
        return record

    def _forget_saved(self, storage: int, key: int, _ref) -> None:
        records = self._saved.get(storage)
        if records is not None:
            records.pop(key, None)
            if not records:
                self._saved.pop(storage, None)

    def _unpack(self, record):
        if type(record) is not _Saved:
            return record
        if self._unresolved:
            with self._lock:
                self._resolve()
        tensor = record.tensor
        if tensor._version != record.version:
            raise RuntimeError(self._version_error(record))
        return tensor

    def _version_error(self, record: _Saved) -> str:
        """Autograd's own message (torch/csrc/autograd/saved_variable.cpp), then the lines."""
        tensor = record.tensor
        shape = ", ".join(str(size) for size in tensor.shape)
        message = ("one of the variables needed for gradient computation has been modified "
                   f"by an inplace operation: [{tensor.type()} [{shape}]]")
        if record.is_output:
            node_name = record.node_name
        else:
            node = tensor.grad_fn
            node_name = node.name() if node is not None else ""
        if node_name:
            message += f", which is output {record.output_nr} of {forward_op_name(node_name)},"
        message += (f" is at version {tensor._version}; expected version {record.version} "
                    "instead.")
        if self._torch.is_anomaly_enabled():
            message += (" Hint: the backtrace further above shows the operation that failed "
                        "to compute its gradient. The variable in question was changed in "
                        "there or anywhere later. Good luck!")
        else:
            message += (" Hint: enable anomaly detection to find the operation that failed to "
                        "compute its gradient, with torch.autograd.set_detect_anomaly(True, "
                        "check_nan=False).")
        saved = record.site.describe() if record.site else "an unknown location"
        modified = record.modified_at.describe() if record.modified_at else "an unknown location"
        return f"{message} aliaslint: saved at {saved}; modified at {modified}."

    # -- NumPy ----------------------------------------------------------------------------

    def _shared_with_numpy(self, tensor, array, site: Site | None, from_numpy: bool) -> None:
        if self._state != "open":
            return
        try:
            storage = tensor.untyped_storage().data_ptr()
        except (RuntimeError, NotImplementedError):
            return
        with self._lock:
            share = self._numpy.get(storage)
            if from_numpy and share is not None and share.array() is array and share.torch_refs:
                share.torch_refs += 1
                return
            self._numpy[storage] = _NumpyShare(weakref.ref(array), site,
                                               1 if from_numpy else None)


@functools.cache
def _mode_type() -> Callable[[Tracer], TorchDispatchMode]:
    from torch.utils._python_dispatch import TorchDispatchMode

    class AliasMode(TorchDispatchMode):
        """Hands writes and views to the tracer; every other op passes straight through."""

        def __init__(self, tracer: Tracer) -> None:
            super().__init__()
            self.tracer = tracer
            self.facts = tracer._facts

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if kwargs is None:
                kwargs = {}
            try:
                facts = self.facts[func]
            except KeyError:
                facts = self.facts[func] = learn(func)
            if facts is None and not self.tracer._attentive:
                return func(*args, **kwargs)
            return self.tracer._observe(func, facts, args, kwargs)

    return AliasMode


# --- NumPy interop: torch.from_numpy and Tensor.numpy are wrapped while a trace is open ---


_ORIGINALS: dict[str, Any] = {}


def _activate(tracer: Tracer) -> None:
    with _ACTIVE_LOCK:
        _ACTIVE.append(tracer)
        if len(_ACTIVE) > 1:
            return
        import torch

        from_numpy, numpy = torch.from_numpy, torch.Tensor.numpy
        _ORIGINALS.update(from_numpy=from_numpy, numpy=numpy)

        @functools.wraps(from_numpy)
        def traced_from_numpy(array):
            tensor = from_numpy(array)
            if not torch.compiler.is_compiling():
                site = user_site()
                for active in list(_ACTIVE):
                    active._shared_with_numpy(tensor, array, site, from_numpy=True)
            return tensor

        @functools.wraps(numpy)
        def traced_numpy(self, *args, **kwargs):
            array = numpy(self, *args, **kwargs)
            if not torch.compiler.is_compiling():
                from aliaslint.memory import shares_memory

                if shares_memory(self, array):
                    site = user_site()
                    for active in list(_ACTIVE):
                        active._shared_with_numpy(self, array, site, from_numpy=False)
            return array

        _install(torch, traced_from_numpy, traced_numpy)


def _deactivate(tracer: Tracer) -> None:
    with _ACTIVE_LOCK:
        if tracer in _ACTIVE:
            _ACTIVE.remove(tracer)
        if _ACTIVE or not _ORIGINALS:
            return
        import torch

        _install(torch, _ORIGINALS.pop("from_numpy"), _ORIGINALS.pop("numpy"))


def _install(torch: ModuleType, from_numpy: Callable[..., Any],
             numpy: Callable[..., Any]) -> None:
    # setattr: torch's types do not foresee its functions being replaced at run time.
    setattr(torch, "from_numpy", from_numpy)
    setattr(torch.Tensor, "numpy", numpy)


def trace() -> Tracer:
    """Observe the code in a ``with`` block; afterwards ``.findings`` lists runtime hazards.

    ::

        with aliaslint.trace() as t:
            train_one_step()
        for finding in t.findings:
            print(finding.code, finding.filename, finding.location.row, finding.message)
    """
    return Tracer()
