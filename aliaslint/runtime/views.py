"""Views in a traced program: where each was made, writes through them (AL201) and writes
whose memory overlaps itself or an input (AL203).

A view's hazards are found at a later call than the one that made it: a write through a view
given a name of its own changes its base, which is wrong only if the base is read later; a
write overlaps an input only as views lay them out.  So the views user code makes are kept
(their layout and line, weakly, for the most recent ones), and so is each write through a
named view until its base is read or freed.  Every other part asks here where a view came
from, for its findings' "made here" lines.
"""

from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass
from typing import Any

from aliaslint.runtime.dispatch import OpEvent, OpInputs
from aliaslint.runtime.evidence import made_then
from aliaslint.runtime.hazards import Hazard
from aliaslint.runtime.regions import Region
from aliaslint.runtime.sites import LazySite, Site, running_in_caller, user_site
from aliaslint.runtime.storages import NO_STORAGE, layout_of, storage_of
from aliaslint.runtime.trace_state import TraceState

# A trace of a long program makes many views; their creation sites are kept for the
# most recent ones only.
_MAX_VIEW_SITES = 1 << 14


@dataclass
class ViewWrite:
    """A write through a named view whose base has not been read since."""

    base: weakref.ref
    view: weakref.ref
    op: str
    site: Site
    view_site: Site
    region: Region | None = None  # the elements written (None: unknown)


class Views:
    """The views made while a trace is open, and the writes through them not yet read."""

    def __init__(self, shared: TraceState) -> None:
        self._shared = shared
        # Kept here too: made_view runs for every view user code makes.
        self._lock, self._watches, self._deep = shared.lock, shared.watches, shared.deep
        # (storage key, offset, shape, strides) → (the storage, weakly; the line; the op).
        self._made: dict[tuple, tuple[weakref.ref, Site | None, str]] = {}
        # id of the base → the write through a view of it, until the base is read.
        self.pending: dict[int, ViewWrite] = {}
        shared.awaits(self.pending)

    # -- where views come from ----------------------------------------------------------

    def view_site(self, tensor) -> tuple[Site | None, str] | None:
        """Where the view with ``tensor``'s layout was made, and by what, if known."""
        try:
            key = layout_of(tensor)
        except NO_STORAGE:
            return None
        entry = self._made.get(key) if key is not None else None
        if entry is None or entry[0]() is None:
            return None
        return entry[1], entry[2]

    def _remember(self, op: str, output: Any, site: Site | None) -> None:
        storage = storage_of(output)
        if storage is None:
            return
        made = self._made
        if len(made) >= _MAX_VIEW_SITES:
            made.clear()
        made[(id(storage), output.storage_offset(), tuple(output.shape), output.stride())] = (
            weakref.ref(storage), site, op)

    def made_view(self, op: str, source: Any, result: Any, site: Site | None,
                  args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """A wrapped call made a view (the default tracer's views)."""
        shared = self._shared
        if not shared.open:
            return
        if op == "detach" and not getattr(source, "requires_grad", False):
            return
        outputs = result if isinstance(result, (list, tuple)) else (result,)
        with self._lock:
            for output in outputs:
                if isinstance(output, shared.tensor_type) and (
                        op == "detach" or output._is_view()):
                    self._remember(op, output, site)
        if self._watches and not self._deep and site is not None:
            for callback in self._watches.get((site.filename, site.line), ()):
                callback(OpEvent(op, args, kwargs, result, site))

    def record(self, op: str, args: tuple, result, site: LazySite) -> None:
        """The deep mode ran an op that makes views: ``result``."""
        shared = self._shared
        # Views autograd makes while running backward cannot be named by user code, and a
        # detached alias matters only for a tensor that requires grad.
        if (shared.torch._C._current_autograd_node() is not None
                or op == "detach" and not (args and getattr(args[0], "requires_grad", False))
                or getattr(shared.local, "packing", False)):
            return
        outputs = result if isinstance(result, (list, tuple)) else (result,)
        with self._lock:
            for output in outputs:
                if isinstance(output, shared.tensor_type):
                    try:
                        self._remember(op, output, site())
                    except NO_STORAGE:
                        continue

    # -- AL201: a write through a view, then a read of its base ------------------------

    def remember_write(self, op: str, view, site: LazySite) -> None:
        """AL201, first half: a write through a view kept under a name of its own."""
        made = self.view_site(view)
        base = view._base
        if made is None or made[0] is None or base is None:
            return
        where = site()
        # A view made and written on one line (`x[:, 0] = 0`, `x[i].zero_()`) is how code
        # updates part of a tensor on purpose; a view made on another line was given a name.
        # So is a view made on a line that is still running, in a caller: an argument
        # (`erase(batch[i])`) that the called function writes.
        if where is None or (made[0].filename, made[0].line) == (where.filename, where.line):
            return
        if running_in_caller(made[0]):
            return
        if self._shared.reported(Hazard.VIEW_WRITE_READ, where):
            return
        key = id(base)
        self.pending[key] = ViewWrite(
            weakref.ref(base, functools.partial(self._forget_write, key)),
            weakref.ref(view), op, where, made[0], Region.of(view),
        )
        self._shared.update_attention()

    def _forget_write(self, key: int, _ref) -> None:
        pending = self.pending.get(key)
        if pending is not None and pending.base() is None:
            del self.pending[key]

    def check_read(self, tensor: Any) -> None:
        """AL201: is ``tensor`` the base of a view written earlier, or another view over
        the written bytes?  The elements written and read must intersect."""
        base = tensor
        pending = self.pending.get(id(base))
        if pending is None or pending.base() is not base:
            base = tensor._base if tensor._is_view() else None
            pending = self.pending.get(id(base)) if base is not None else None
            if pending is None or pending.base() is not base or pending.view() is tensor:
                return
        read = Region.of(tensor)
        overlap = pending.region.overlap(read) if pending.region and read else None
        if overlap or overlap is None and base is tensor:
            self._report_write(id(base), pending, overlap.note() if overlap else "")

    def _report_write(self, key: int, pending: ViewWrite, note: str = "") -> None:
        del self.pending[key]
        read = user_site()
        self._shared.report(
            Hazard.VIEW_WRITE_READ, pending.site,
            f"in-place `{pending.op}` through a view also changes its base, "
            f"which is read afterwards{note}",
            [("view created here", pending.view_site), ("base read here", read)],
            [("the base, read afterwards", pending.base()),
             (f"the view, written by `{pending.op}`", pending.view())],
            [*made_then((pending.view_site, ""), "written", pending.site, pending.op),
             ("read", read, None, "")])
        self._shared.update_attention()

    # -- AL203: a write over memory it also reads --------------------------------------

    def check_overlap(self, op: str, tensor, storage: int, inputs: OpInputs,
                      site: LazySite, args: tuple[Any, ...] = ()) -> None:
        """AL203: the destination overlaps itself, or an input overlaps it partially: the
        elements an input covers differ from those written and intersect them.  Copying a
        view onto the very elements it covers (``x[1:4] += 1`` ends with
        ``x[1:4] = <that view>``) is not a hazard."""
        shared = self._shared
        if tensor._is_view() and shared.torch._debug_has_internal_overlap(tensor) == 1:
            if shared.reported(Hazard.OVERLAPPING_WRITE, site()):
                return
            made = self.view_site(tensor)
            shared.report(
                Hazard.OVERLAPPING_WRITE, site(),
                f"in-place `{op}` writes a tensor in which several elements share one memory "
                "location (a stride of 0, as `expand` makes); clone it first",
                [(f"`{made[1]}` made it here", made[0])] if made else [],
                [(f"written by `{op}`", tensor)], made_then(made, "written", site(), op))
            return
        # Two distinct tensors overlap partially only if one of them is a view.
        if not inputs.tensors or not (tensor._is_view() or inputs.any_view()):
            return
        written: Region | None = None
        for other in inputs.on_storage(storage):
            if written is None:  # only for a write with an input over its storage
                written = Region.of(tensor)
                if written is not None and op == "__setitem__" and len(args) > 1 \
                        and args[0] is tensor:
                    # `x[key] = value` writes only the elements `x[key]` covers; for
                    # advanced indexing the key's values pick them: all of `x` may be.
                    written = written.index(args[1]) or written
            theirs = Region.of(other)
            if written is None or theirs is None:
                continue
            overlap = None if theirs.same_elements(written) else written.overlap(theirs)
            if not overlap:
                continue
            if shared.reported(Hazard.OVERLAPPING_WRITE, site()):
                return
            made = self.view_site(other)
            shared.report(
                Hazard.OVERLAPPING_WRITE, site(),
                f"in-place `{op}` reads an input that partially overlaps the memory it "
                f"writes; the result depends on the order elements are visited{overlap.note()}",
                [("overlapping view created here", made[0])] if made else [],
                [(f"written by `{op}`", tensor), (f"read by `{op}`", other)],
                made_then(made, "written", site(), op))
            return
