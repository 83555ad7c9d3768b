"""Tensors autograd saves for backward, and writes to them that a backward pass then reads
(through the tensor, a ``.detach()`` alias, ``.data``, or an in-place module).

While a trace is open autograd stores a record (``aliaslint.runtime.saved``) instead of each
saved tensor: its storage, version and the line that saved it.  A write to a saved tensor is
noted by the write handling (``aliaslint.runtime.writes``), but it is a hazard only once a
backward pass reads the tensor, which is when the unpack hook runs: that is where it is
reported.  Since autograd skips its own version check under saved-tensor hooks, the unpack
hook raises the very error autograd would.
"""

from __future__ import annotations

import functools
import weakref
from typing import TYPE_CHECKING, Any

from aliaslint.runtime.hazards import Hazard
from aliaslint.runtime.observer import SavedTensorHook
from aliaslint.runtime.saved import Saved, forward_op_name, history, version_error
from aliaslint.runtime.shared_arrays import SharedArrays
from aliaslint.runtime.sites import Site, user_site, written_where
from aliaslint.runtime.storages import NO_STORAGE
from aliaslint.runtime.trace_state import TraceState
from aliaslint.runtime.views import Views

if TYPE_CHECKING:
    from aliaslint.runtime.writes import Writes


class SavedTensors:
    """The records of the tensors autograd holds for backward, by storage, and the
    saved-tensor hooks that make and read them."""

    # The write handling, which is built on these records: set by the tracer.  Saving a
    # tensor reads it, and a backward pass must see the deep mode's writes settled.
    writes: Writes

    def __init__(self, shared: TraceState, views: Views, arrays: SharedArrays) -> None:
        self._shared = shared
        self._lock = shared.lock
        self._views = views
        self._arrays = arrays
        # Storage key → weak references to the records of the tensors saved over it.
        self.by_storage: dict[int, list[weakref.ref[Saved]]] = {}
        # How many saved tensors backward passes have read.
        self.unpacked = 0

    def _record(self, tensor, inner: Any = None, nested: bool = False) -> Saved | None:
        try:
            storage = tensor.untyped_storage()
            version = tensor._version
        except NO_STORAGE:  # no plain storage, or an inference tensor (no version counter)
            return None
        node = tensor.grad_fn
        # Autograd creates an op's node before it saves the inputs and saves the outputs
        # right after; an output is thus a tensor whose node is the newest one.
        is_output = (node is not None and node._sequence_nr()
                     == self._shared.torch._C._autograd._get_sequence_nr() - 1)
        if nested:
            kept, original = None, weakref.ref(tensor)
        elif is_output:
            kept, original = self._detach(tensor), None
        else:
            kept, original = tensor, None
        site = user_site()
        # The node's class names it (`SigmoidBackward0`) without holding on to it.
        record = Saved(kept, original, inner, version, site, tensor.requires_grad, is_output,
                       type(node).__name__ if node is not None else "", tensor.output_nr)
        key = id(storage)
        self.by_storage.setdefault(key, []).append(
            weakref.ref(record, functools.partial(self._forget, key)))
        if self._views.pending or self._arrays.shares:
            with self._lock:
                # Saving is reading: the op that saves this tensor has it as an operand.
                self.writes.reads([tensor], lambda: site, "")
        return record

    def _detach(self, tensor):
        """A detached alias, made by torch's own method (not a wrapper, not a recorded view)."""
        local = self._shared.local
        local.packing = True
        try:
            return self._shared.torch._C.TensorBase.detach(tensor)
        finally:
            local.packing = False

    def _forget(self, key: int, ref: weakref.ref) -> None:
        """Autograd freed a record: its storage's key may now name another storage."""
        with self._lock:
            refs = self.by_storage.get(key)
            if refs is not None:
                try:
                    refs.remove(ref)
                except ValueError:
                    pass
                if not refs:
                    del self.by_storage[key]

    def pack(self, tensor):
        if not self._shared.open:
            return tensor
        record = self._record(tensor)
        return tensor if record is None else record

    def unpack(self, record):
        if type(record) is not Saved:
            return record
        self.unpacked += 1
        writes = self.writes
        if writes.unresolved:
            with self._lock:
                writes.resolve()
        tensor = record.tensor
        if tensor._version != record.version:
            with self._lock:
                self._written_read(record, raises=True)
            raise RuntimeError(version_error(record, self._shared.torch.is_anomaly_enabled()))
        if record.overwritten_at is not None or self._arrays.shares:
            with self._lock:
                self._read(record, tensor)
        return tensor

    def nest_hooks(self, pack: SavedTensorHook,
                   unpack: SavedTensorHook) -> tuple[SavedTensorHook, SavedTensorHook]:
        """The program's saved-tensor hooks, run inside the tracer's: its ``pack`` keeps
        what it wants; the tracer records the tensor, and when backward unpacks it checks
        whether what the program's ``unpack`` gives back is memory written meanwhile (as
        with activation checkpointing, which recomputes from the current inputs).  torch
        runs no version check under such hooks, so neither does the tracer raise."""

        def nested_pack(tensor):
            packed = pack(tensor)
            if not self._shared.open:
                return packed
            record = self._record(tensor, packed, nested=True)
            return packed if record is None else record

        def nested_unpack(packed):
            if type(packed) is not Saved:
                return unpack(packed)
            tensor = unpack(packed.inner)
            self.unpacked += 1
            original = packed.current()
            if original is not None and self._shared.open:
                from aliaslint.memory import shares_memory

                with self._lock:
                    if original._version != packed.version and shares_memory(original, tensor):
                        self._written_read(packed, raises=False)
                    elif packed.overwritten_at is not None or self._arrays.shares:
                        self._read(packed, tensor)
            return tensor

        return nested_pack, nested_unpack

    def _written_read(self, record: Saved, raises: bool) -> None:
        """AL101 / AL104: backward reads a saved tensor written since it was saved."""
        backward = user_site()
        saver = f" by `{forward_op_name(record.node_name)}`" if record.is_output else ""
        outcome = ("backward raises \"modified by an inplace operation\"" if raises else
                   "backward computes from the new values")
        related: list[tuple[str, Site | None]] = [("saved for backward here", record.site)]
        story = history(record, backward)
        if record.modified_at is None:
            # Written by a call the default tracer does not wrap (torch's C++ code).
            self._shared.report(
                Hazard.SAVED_WRITTEN, record.site,
                f"a tensor saved for backward here{saver} was written in place before the "
                f"backward pass read it, by an operation the trace did not see (`--deep` "
                f"shows it); {outcome}",
                [("backward runs here", backward)], **story)
            return
        if record.modified_detached:
            related.append(("detached here", record.detach_site))
            related.append(("backward runs here", backward))
            self._shared.report(
                Hazard.DETACHED_WRITTEN, record.modified_at,
                f"in-place `{record.modified_op}` on a `.detach()` alias changes a tensor that "
                f"autograd saved for backward; {outcome}", related, **story)
            return
        related.append(("backward runs here", backward))
        where, runs = written_where(record.modified_at)  # an in-place module's: where built
        self._shared.report(
            Hazard.MODULE_SAVED_WRITTEN if runs else Hazard.SAVED_WRITTEN, where,
            f"in-place `{record.modified_op}` writes a tensor that autograd saved for "
            f"backward{saver}; {outcome}", runs + related, **story)

    def _read(self, record: Saved, tensor: Any) -> None:
        """AL103 and AL301 when backward reads a saved tensor whose counter did not move."""
        if record.overwritten_at is not None:
            backward = user_site()
            self._shared.report(
                Hazard.UNCOUNTED_WRITTEN, record.overwritten_at,
                f"in-place `{record.overwritten_op}` through an alias with its own version "
                "counter (`.data`) changes a tensor saved for backward; autograd cannot "
                "notice and computes the gradient from the new values",
                [("saved for backward here", record.site), ("backward runs here", backward)],
                **history(record, backward))
        if self._arrays.shares:
            self._arrays.read(tensor, user_site, "backward")
