"""The runtime half: run code under observation and report alias hazards as they happen.

``trace()`` is a context manager.  By default it watches three things, each cheap:

* what autograd saves, through saved-tensor hooks (``torch.autograd.graph``): each saved
  tensor's storage, version counter and the user line that saved it;
* the calls that write memory or make views, through wrappers installed on those torch
  functions and methods only (``aliaslint.runtime.patches``; which ones comes from the
  generated op tables), so calls that neither write nor save run with no Python of ours;
* the aliasing errors torch raises at a write (``aliaslint.runtime.refusals``), seen as
  they pass through a wrapper and re-raised untouched.

``trace(deep=True)`` adds a ``TorchDispatchMode`` that sees every ATen op with its schema
(writes are arguments marked ``Tensor(a!)``, views are outputs marked ``Tensor(a)``):
writes torch makes from C++ (batch norm statistics, fused kernels), every read of a
tensor, and views made anywhere.  It costs a Python call per op.

Storages are identified by torch's storage objects (``aliaslint.runtime.storages``), not by
addresses alone; tensors the user made are only held through weak references, and no
tensor data is read, copied or synchronised (except the bytes shared with NumPy arrays,
hashed on the CPU: ``aliaslint.runtime.numpy_share``).

While saved-tensor hooks are installed autograd skips its own version check when backward
unpacks a saved tensor, so the unpack hook performs that check and raises the very
``RuntimeError`` autograd would, with the saving and the writing line appended.  A write
to a saved tensor is reported there, when a backward pass reads it.

Findings are ``Diagnostic``s with ``status="runtime"``, one per (code, location).  torch is
imported when a trace starts, never when this module is imported.

The tracer is split by what it follows, each part in a module of its own: saved tensors
(``saved_tensors``), views (``views``), writes (``writes``), memory shared with NumPy
(``shared_arrays``), torch's refusals (``refusal_reports``) and the deep mode's ops
(``deep``), all reporting into one ``TraceState``.  ``Tracer`` builds them, wires them to
torch's hooks and the patches, and answers for the trace as a whole.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

from aliaslint.diagnostics import Diagnostic
from aliaslint.runtime.deep import DeepObserver
from aliaslint.runtime.dispatch import OpEvent, mode_type
from aliaslint.runtime.observer import EntryPointObserver
from aliaslint.runtime.patches import Patches
from aliaslint.runtime.program import run_program
from aliaslint.runtime.refusal_reports import Refusals
from aliaslint.runtime.refusals import REFUSALS
from aliaslint.runtime.saved import forward_op_name
from aliaslint.runtime.saved_tensors import SavedTensors
from aliaslint.runtime.shared_arrays import SharedArrays
from aliaslint.runtime.trace_state import LineCallback, TraceState
from aliaslint.runtime.views import Views
from aliaslint.runtime.writes import WriteNote, Writes

# What torch says when an in-place op writes a leaf that requires grad with grad mode on.
LEAF_ERROR = REFUSALS[0].text

__all__ = ["OpEvent", "Tracer", "forward_op_name", "run_program", "trace"]

# torch is one per process, and so are the wrappers on it: every tracer joins these.
_PATCHES = Patches()


class Tracer:
    """Observes the code run inside ``with trace() as t:``; ``t.findings`` lists the hazards.

    To the patches it is the observer of torch's entry points (``EntryPointObserver``); each
    of those calls goes straight to the part that follows it, bound here once, so that a
    wrapped call costs one method call.
    """

    def __init__(self, deep: bool = False, patches: Patches | None = None) -> None:
        self.deep = deep
        self._patches = _PATCHES if patches is None else patches
        self._shared = shared = TraceState(deep)
        self._views = views = Views(shared)
        self._arrays = arrays = SharedArrays(shared)
        self._saved = saved = SavedTensors(shared, views, arrays)
        self._writes = writes = Writes(shared, saved.by_storage, views, arrays)
        saved.writes = writes
        self._refusals = refusals = Refusals(shared, views)
        self._deep = DeepObserver(shared, writes, views, self._patches.wrapped_caller_is_user)
        self.will_write = writes.will_write
        self.wrote = writes.wrote
        self.refused = refusals.refused
        self.function_refused = refusals.function_refused
        self.function_wrote_input = refusals.function_wrote_input
        self.made_view = views.made_view
        self.shared_with_numpy = arrays.shared_with_numpy
        self.nest_hooks = saved.nest_hooks
        self.snapshot_overwritten = shared.snapshot_overwritten
        self._state = "new"
        self._previous_thread_profile: Callable[[FrameType, str, Any], object] | None = None

    @property
    def findings(self) -> list[Diagnostic]:
        """The runtime findings so far, one per (hazard, location), in source order, each
        with the code of the rule that reports its hazard."""
        with self._shared.lock:
            self._writes.resolve()
            return self._shared.findings()

    @property
    def unpacked(self) -> int:
        """How many saved tensors backward passes have read so far."""
        return self._saved.unpacked

    def watch(self, filename: str, line: int, callback: LineCallback) -> None:
        """Call ``callback(event)`` for the operations user code runs at ``filename:line``:
        every call that writes or makes a view (with ``deep``: every ATen op).

        The hook a static finding's witness is evaluated through: the finding names a
        line and a predicate, and the callback checks the predicate on the live tensors.
        Every write (with ``deep``: every op) is attributed to its line while a watch is
        set, so tracing is slower then.
        """
        key = (os.path.abspath(filename), line)
        shared = self._shared
        with shared.lock:
            shared.watches.setdefault(key, []).append(callback)
            shared.update_attention()

    def __enter__(self) -> Tracer:
        if self._state != "new":
            raise RuntimeError("a Tracer can be entered only once; call aliaslint.trace() again")
        import torch

        shared = self._shared
        shared.torch = torch
        shared.tensor_type = torch.Tensor
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._saved.pack,
                                                               self._saved.unpack)
        self._hooks.__enter__()
        try:
            if self.deep:
                self._mode = mode_type()(self._deep)
                self._mode.__enter__()
            try:
                observer: EntryPointObserver[WriteNote] = self
                self._patches.activate(observer)
            except BaseException:
                if self.deep:
                    self._mode.__exit__(None, None, None)
                raise
        except BaseException:
            self._hooks.__exit__(None, None, None)
            raise
        self._state = "open"
        shared.open = True
        self._previous_thread_profile = threading.getprofile()
        threading.setprofile(self._start_thread)
        return self

    def __exit__(self, *exc_info) -> None:
        self._refusals.refused_at_exit(exc_info[1])
        threading.setprofile(self._previous_thread_profile)
        self._patches.deactivate(self)
        self._state = "closed"
        self._shared.open = False
        try:
            if self.deep:
                self._mode.__exit__(*exc_info)
        finally:
            self._hooks.__exit__(*exc_info)
        with self._shared.lock:
            self._writes.resolve()

    def _start_thread(self, frame: FrameType, event: str, arg: object) -> None:
        """Runs once in each thread started while the trace is open and joins it to the trace."""
        sys.setprofile(self._previous_thread_profile)
        if self._state != "open":
            return
        self._patches.push_hooks(self._shared.torch, self._saved.pack, self._saved.unpack)
        if self.deep:
            from torch.utils._python_dispatch import _push_mode

            # Threads outlive the trace sometimes; a closed tracer passes every op through.
            _push_mode(self._mode)


def trace(deep: bool = False) -> Tracer:
    """Observe the code in a ``with`` block; afterwards ``.findings`` lists runtime hazards.

    ``deep=True`` also runs a dispatch mode that sees every ATen op (slower; it finds writes
    torch makes from C++ code and reads of any kind).  ::

        with aliaslint.trace() as t:
            train_one_step()
        for finding in t.findings:
            print(finding.code, finding.filename, finding.location.row, finding.message)
    """
    return Tracer(deep=deep)
