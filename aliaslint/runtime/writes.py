"""Writes in a traced program: what each is about to change, and what it changed once it
has run.

A write is where most hazards begin but few end: writing a saved tensor, a named view or
memory NumPy shares is wrong only when something reads it later, which another part sees.
So before a write runs, it is checked against those parts' records (a hazard it is already,
such as an overlap, is reported there and then) and noted; after it runs, when version
counters have moved, the note is settled into the records it concerns (a saved tensor's
record learns who wrote it, through what).  Most writes, an optimizer's say, touch none of
it: they return at once, which is what keeps the default tracer cheap.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aliaslint.runtime.dispatch import OpEvent, OpInputs
from aliaslint.runtime.evidence import layout, made_then
from aliaslint.runtime.hazards import Hazard
from aliaslint.runtime.numpy_share import NumpyShare
from aliaslint.runtime.observer import Call, WriteSpec, any_view
from aliaslint.runtime.refusals import SLOPED, negative_parameter
from aliaslint.runtime.saved import Saved
from aliaslint.runtime.shared_arrays import SharedArrays
from aliaslint.runtime.sites import LazySite, Site, written_where
from aliaslint.runtime.storages import storage_of
from aliaslint.runtime.trace_state import TraceState
from aliaslint.runtime.views import Views


@dataclass
class WriteNote:
    """What a write found before it ran, settled once it has (versions move afterwards)."""

    op: str
    site: LazySite
    targets: list[Any]
    pending: list[tuple[Saved, int, Any, bool]] = field(default_factory=list)
    shares: list[NumpyShare] = field(default_factory=list)
    call: Call | None = None  # the wrapped call, for the default tracer


class Writes:
    """Checks each write against the other parts' records, and settles it afterwards."""

    def __init__(self, shared: TraceState, saved: dict[int, list[weakref.ref[Saved]]],
                 views: Views, arrays: SharedArrays) -> None:
        """``saved``: the records of the saved tensors by storage (`SavedTensors.by_storage`),
        which the saved-tensor part keeps and this part reads."""
        self._shared = shared
        self._views = views
        self._arrays = arrays
        # will_write runs for every wrapped write: it reads these collections (never
        # rebound by their owners) and settings without going through their owners.
        self._saved = saved
        self._shares = arrays.shares
        self._view_writes = views.pending
        self._watches = shared.watches
        self._lock = shared.lock
        self._deep = shared.deep
        # The deep mode's writes, whose version counters move only after its op returns.
        self.unresolved: list[WriteNote] = []
        shared.awaits(self.unresolved)

    def will_write(self, spec: WriteSpec, args: tuple[Any, ...], kwargs: dict[str, Any],
                   targets: list[Any]) -> WriteNote | None:
        """A wrapped call is about to write ``targets`` (the default tracer's writes).  Most
        writes (an optimizer's, say) touch no saved tensor, view or shared array: they
        return at once."""
        if not self._shared.open:
            return None
        if spec.name in SLOPED:
            self._negative_slope(spec, args, kwargs, targets)
        if self._deep:
            # The dispatch mode sees the elements written (`x[0, 1] = v` writes a
            # temporary view of `x`); the call shows which tensor the user wrote through.
            if spec.data and any(t._is_view() for t in targets):
                call = Call(spec, args, kwargs, targets)
                with self._lock:
                    for tensor in targets:
                        if tensor._is_view():
                            self._views.check_overlap(spec.name, tensor, 0, OpInputs([]),
                                                      call.site)
                            self._views.remember_write(spec.name, tensor, call.site)
            return None
        if not (self._saved or self._shares or self._view_writes or self._watches or (
                spec.data and any_view(args, kwargs, self._shared.tensor_type))):
            return None
        call = Call(spec, args, kwargs, targets)
        with self._lock:
            note = self.before_write(spec.name, targets, call.site, spec.data, call.inputs,
                                     args)
        if note is not None:
            note.call = call
        return note

    def _negative_slope(self, spec: WriteSpec, args: tuple[Any, ...], kwargs: dict[str, Any],
                        targets: list[Any]) -> None:
        """An in-place `leaky_relu` with a negative slope, `elu`/`celu` with a negative alpha,
        on a tensor that requires grad with grad mode on: its backward refuses it."""
        found = negative_parameter(spec.name, args, kwargs)
        if found is None or not self._shared.torch.is_grad_enabled() or not any(
                getattr(t, "requires_grad", False) for t in targets):
            return
        keyword, value = found
        setting = f"{keyword}={value}" if keyword.isidentifier() else f"{keyword} = {value}"
        call = Call(spec, args, kwargs, targets)
        with self._lock:
            where, runs = written_where(call.site())
            if self._shared.reported(Hazard.NEGATIVE_SLOPE, where):
                return
            self._shared.report(
                Hazard.NEGATIVE_SLOPE, where,
                f"in-place `{spec.name}` with {setting} on a tensor that requires grad: "
                "a backward pass through it raises (\"backward calculation is triggered with "
                "a negative slope\"); use the out-of-place call (`inplace=False`)",
                runs, [(f"written by `{spec.name}`", t) for t in targets],
                made_then(None, "written", where, spec.name))

    def wrote(self, note: WriteNote) -> None:
        """The write ``will_write`` noted has run: settle it, and tell the watches."""
        with self._lock:
            self._settle(note)
        call = note.call
        if self._watches and call is not None:
            where = call.site()
            if where is not None:
                for callback in self._watches.get((where.filename, where.line), ()):
                    callback(OpEvent(call.spec.name, call.args, call.kwargs, None, where,
                                     tuple(call.targets)))

    def before_write(self, op: str, targets: list[Any], site: LazySite, data: bool,
                     inputs: Callable[[], list[Any]],
                     args: tuple[Any, ...] = ()) -> WriteNote | None:
        """What a write of ``targets`` is about to change: reported now if it is a hazard
        already, noted to be settled after the write if it may become one."""
        note = None
        if self._watches:
            note = WriteNote(op, site, targets)
        read: list[Any] | None = None
        if self._view_writes or self._shares:
            # The op reads its inputs before it writes: a read of the bytes this very write
            # is about to change (`x[1:4] = <x[1:4] scaled in place>`) is not a read after it.
            read = inputs()
            self.reads(read, site, op)
        for tensor in targets:
            storage = storage_of(tensor)
            if storage is None:
                continue
            key = id(storage)
            refs = self._saved.get(key)
            if refs:
                records = [r for r in (ref() for ref in tuple(refs)) if r is not None]
                if records:
                    from aliaslint.memory import shares_memory

                    note = note or WriteNote(op, site, targets)
                    for record in records:
                        saved = record.current()
                        if saved is not None:
                            note.pending.append((record, saved._version, tensor,
                                                 shares_memory(tensor, saved)))
            if self._shares:
                share = self._shares.get(key)
                if share is not None:
                    note = note or WriteNote(op, site, targets)
                    note.shares.append(share)
                    self._arrays.torch_wrote(op, share, site, tensor)
            if data:
                if read is None:
                    read = inputs()
                self._views.check_overlap(op, tensor, key, OpInputs(read), site, args)
            if tensor._is_view():
                self._views.remember_write(op, tensor, site)
            if self._view_writes:
                # A write through the base itself replaces what the view wrote.
                self._view_writes.pop(id(tensor), None)
            if self._shares:
                self.reads(targets, site, op)
        return note

    def _settle(self, note: WriteNote) -> None:
        """After the write: a moved version counter is a write autograd will notice (AL101 /
        AL104 when a backward pass reads the tensor); bytes changed with the counter still
        is a write through `.data` (AL103), if user code made it itself."""
        for record, before, writer, overlaps in note.pending:
            saved = record.current()
            if saved is None:
                continue
            version = saved._version
            if version != before and version != record.version and record.modified_at is None:
                record.modified_at = note.site()
                record.modified_op = note.op
                record.modified_layout, record.modified_version = layout(writer), version
                record.modified_detached = record.requires_grad and not writer.requires_grad
                if record.modified_detached:
                    made = self._views.view_site(writer)
                    if made is not None and made[1] == "detach":
                        record.detach_site = made[0]
            elif version == before and overlaps and record.overwritten_at is None:
                where = note.site()
                # torch's own utilities write through `.data` on purpose and undo it
                # (gradcheck's perturbations); only the user's own such writes count.
                if note.site.direct:
                    record.overwritten_at, record.overwritten_op, record.overwritten_layout = (
                        where, note.op, layout(writer))
        for share in note.shares:
            share.refresh()

    def resolve(self) -> None:
        """Settle the deep mode's writes, now that autograd has moved version counters."""
        pending = self.unresolved[:]
        self.unresolved.clear()  # in place: the trace's attention watches this list
        for note in pending:
            self._settle(note)
        self._shared.update_attention()

    def reads(self, tensors: list[Any], site: Callable[[], Site | None], op: str) -> None:
        """Tensors an operation reads: the base of a view written earlier (AL201), memory a
        NumPy array changed (AL301)."""
        for tensor in tensors:
            if self._view_writes:
                self._views.check_read(tensor)
            if self._shares:
                self._arrays.read(tensor, site, op)
