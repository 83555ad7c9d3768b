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
"""

from __future__ import annotations

import functools
import os
import sys
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from types import FrameType
from typing import TYPE_CHECKING, Any

from aliaslint.diagnostics import Diagnostic
from aliaslint.runtime import patches
from aliaslint.runtime.dispatch import OpEvent, OpFacts, OpInputs, mode_type, written
from aliaslint.runtime.evidence import Moment, Named, finding, layout, made_then
from aliaslint.runtime.hazards import Hazard
from aliaslint.runtime.hazards import codes as hazard_codes
from aliaslint.runtime.numpy_share import NumpyShare
from aliaslint.runtime.program import run_program
from aliaslint.runtime.refusals import REFUSALS, SLOPED, Refusal, negative_parameter, refusal
from aliaslint.runtime.regions import Region
from aliaslint.runtime.saved import Saved as _Saved
from aliaslint.runtime.saved import forward_op_name, history, version_error
from aliaslint.runtime.sites import LazySite, Site, user_site, written_where
from aliaslint.runtime.storages import NO_STORAGE, layout_of, storage_of
from aliaslint.runtime.usercode import is_user_file

if TYPE_CHECKING:
    from aliaslint.runtime.patches import Call, WriteSpec

# What torch says when an in-place op writes a leaf that requires grad with grad mode on.
LEAF_ERROR = REFUSALS[0].text

__all__ = ["OpEvent", "Tracer", "forward_op_name", "run_program", "trace"]


@dataclass
class _WriteNote:
    """What a write found before it ran, settled once it has (versions move afterwards)."""

    op: str
    site: LazySite
    targets: list[Any]
    pending: list[tuple[_Saved, int, Any, bool]] = field(default_factory=list)
    shares: list[NumpyShare] = field(default_factory=list)
    call: Call | None = None  # the wrapped call, for the default tracer


@dataclass
class _ViewWrite:
    """A write through a named view whose base has not been read since."""

    base: weakref.ref
    view: weakref.ref
    op: str
    site: Site
    view_site: Site
    region: Region | None = None  # the elements written (None: unknown)


LineCallback = Callable[[OpEvent], None]


# A trace of a long program makes many views; their creation sites are kept for the
# most recent ones only.
_MAX_VIEW_SITES = 1 << 14


# --- the tracer ------------------------------------------------------------------------------


class Tracer:
    """Observes the code run inside ``with trace() as t:``; ``t.findings`` lists the hazards."""

    def __init__(self, deep: bool = False) -> None:
        self.deep = deep
        # (hazard, file, start) → the finding, its code given when findings are read.
        self._findings: dict[tuple, Diagnostic] = {}
        self._facts: dict[Any, OpFacts | None] = {}
        # Storage key → weak references to the records of the tensors saved over it.
        self._saved: dict[int, list[weakref.ref[_Saved]]] = {}
        self._numpy: dict[int, NumpyShare] = {}
        self._view_sites: dict[tuple, tuple[weakref.ref, Site | None, str]] = {}
        self._view_writes: dict[int, _ViewWrite] = {}
        self._unresolved: list[_WriteNote] = []
        self._watches: dict[tuple[str, int], list[LineCallback]] = {}
        self._local = threading.local()
        self._lock = threading.RLock()
        # True while pending state asks the deep mode to look at every op, not just writes.
        self._attentive = False
        self._state = "new"
        self._previous_thread_profile: Callable[[FrameType, str, Any], object] | None = None
        self._unpacked = 0

    # -- public ---------------------------------------------------------------------------

    @property
    def findings(self) -> list[Diagnostic]:
        """The runtime findings so far, one per (hazard, location), in source order, each
        with the code of the rule that reports its hazard."""
        with self._lock:
            self._resolve()
            if not self._findings:
                return []
            codes = hazard_codes()
            found = [replace(finding, code=codes[key[0]])
                     for key, finding in self._findings.items()]
        return sorted(found, key=lambda d: d.sort_key)

    @property
    def unpacked(self) -> int:
        """How many saved tensors backward passes have read so far."""
        return self._unpacked

    def watch(self, filename: str, line: int, callback: LineCallback) -> None:
        """Call ``callback(event)`` for the operations user code runs at ``filename:line``:
        every call that writes or makes a view (with ``deep``: every ATen op).

        The hook a static finding's witness is evaluated through: the finding names a
        line and a predicate, and the callback checks the predicate on the live tensors.
        Every write (with ``deep``: every op) is attributed to its line while a watch is
        set, so tracing is slower then.
        """
        key = (os.path.abspath(filename), line)
        with self._lock:
            self._watches.setdefault(key, []).append(callback)
            self._update_attention()

    def __enter__(self) -> Tracer:
        if self._state != "new":
            raise RuntimeError("a Tracer can be entered only once; call aliaslint.trace() again")
        import torch

        self._torch = torch
        self._tensor_type = torch.Tensor
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
        self._hooks.__enter__()
        try:
            if self.deep:
                self._mode = mode_type()(self)
                self._mode.__enter__()
            try:
                patches.activate(self)
            except BaseException:
                if self.deep:
                    self._mode.__exit__(None, None, None)
                raise
        except BaseException:
            self._hooks.__exit__(None, None, None)
            raise
        self._state = "open"
        self._previous_thread_profile = threading.getprofile()
        threading.setprofile(self._start_thread)
        return self

    def __exit__(self, *exc_info) -> None:
        self._refused_at_exit(exc_info[1])
        threading.setprofile(self._previous_thread_profile)
        patches.deactivate(self)
        self._state = "closed"
        try:
            if self.deep:
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
        patches.push_hooks(self._torch, self._pack, self._unpack)
        if self.deep:
            from torch.utils._python_dispatch import _push_mode

            # Threads outlive the trace sometimes; a closed tracer passes every op through.
            _push_mode(self._mode)

    # -- findings -------------------------------------------------------------------------

    def _report(self, hazard: Hazard, site: Site | None, message: str,
                related: Sequence[tuple[str, Site | None]] = (), views: Sequence[Named] = (),
                events: Sequence[Moment] = ()) -> None:
        """A finding, once per (hazard, place); ``views`` (tensors and what they are to it)
        and ``events`` become its evidence, read only now that it is new."""
        if site is not None and (key := (hazard, site.filename, site.span()[0])) \
                not in self._findings:
            self._findings[key] = finding(site, message, related, views, events)

    def _reported(self, hazard: Hazard, site: Site | None) -> bool:
        return site is None or (hazard, site.filename, site.span()[0]) in self._findings

    def _update_attention(self) -> None:
        self._attentive = bool(self._view_writes or self._unresolved or self._watches
                               or self._numpy)

    # -- what torch refuses ---------------------------------------------------------------

    def _refused(self, call: Call, error: BaseException) -> None:
        """A wrapped write raised: if torch refused it as an aliasing hazard, report it."""
        case = refusal(error)
        if case is None or self._state != "open":
            return
        with self._lock:
            self._report_refusal(case, call.spec.name, call.site(), call.targets, call.inputs)

    def _report_refusal(self, case: Refusal, op: str, site: Site | None, targets: list[Any],
                        inputs: Callable[[], list[Any]], origin: Site | None = None) -> None:
        related: list[tuple[str, Site | None]] = []
        views: list[Named] = [(f"written by `{op}`" if op else "written", t) for t in targets]
        made = None
        if case.kind in ("view", "overlap"):
            for tensor in targets:
                made = self._view_site(tensor)
                if made is not None:
                    related.append((f"`{made[1]}` made the view here", made[0]))
                    break
        elif case.kind == "input":
            for tensor in inputs():
                made = self._view_site(tensor)
                if made is not None:
                    related.append((f"`{made[1]}` made the overlapping input here", made[0]))
                    views.append((f"overlapping input, made by `{made[1]}`", tensor))
                    break
        elif case.kind == "out" and any(
                t.is_leaf and t.requires_grad for t in targets):
            # `out=` a leaf that requires grad: the write the leaf rule is about, though
            # torch names the `out=` argument first.
            case = case._replace(hazard=Hazard.LEAF_REFUSED)
        events = made_then(made, "written", site, op)
        if case.kind == "function":
            if origin is not None:
                related.append(("its `forward` is defined here", origin))
            what = f" `{op}`" if op else ""
            self._report(case.hazard, site, f"torch refused the outputs of the custom "
                         f"`autograd.Function`{what}: {case.explanation}", related, views, events)
            return
        name = f"`{op}`" if op else "an in-place operation"
        call = "call" if case.kind == "out" else "in-place"
        self._report(case.hazard, site, f"torch refused the {call} {name}: {case.explanation}",
                     related, views, events)

    def _function_refused(self, name: str, site: Site | None, error: BaseException,
                          forward: Site | None) -> None:
        """``Function.apply`` raised: if torch refused the Function's outputs as an aliasing
        hazard (an input marked dirty and not returned), report it at the call."""
        case = refusal(error)
        if case is None or self._state != "open":
            return
        with self._lock:
            self._report_refusal(case, name, site, [], list, forward)

    def _function_wrote_input(self, name: str, op: str, write: Site | None,
                              call: Site | None) -> None:
        """A custom Function's ``forward`` wrote an input that requires grad and did not
        mark it dirty: autograd still describes the input by its old history."""
        if self._state != "open":
            return
        with self._lock:
            where = write or call
            related = [("the Function is applied here", call)] if write is not None else []
            self._report(
                Hazard.FUNCTION_INPUT_WRITTEN, where,
                f"the `forward` of the custom `autograd.Function` `{name}` writes an input "
                f"that requires grad in place (`{op}`) without `ctx.mark_dirty`: autograd "
                "keeps the input's old history, so gradients through it are silently wrong; "
                "call `ctx.mark_dirty(input)` and return it, or write a clone",
                related, events=[("written", where, None, op)])

    def _refused_at_exit(self, error: BaseException | None) -> None:
        """A refusal that ended the traced block without passing a wrapper (a write torch
        made from C++ code): its innermost user frame is the write."""
        case = refusal(error)
        if case is None or error is None:
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
        with self._lock:
            # An `out=` refusal the wrapper saw may have been reported as the leaf's.
            if not self._reported(case.hazard, site) and not (
                    case.kind == "out" and self._reported(Hazard.LEAF_REFUSED, site)):
                self._report_refusal(case, "", site, [], list)

    # -- writes ---------------------------------------------------------------------------

    def _will_write(self, spec: WriteSpec, args: tuple[Any, ...], kwargs: dict[str, Any],
                    targets: list[Any]) -> _WriteNote | None:
        """A wrapped call is about to write ``targets`` (the default tracer's writes).  Most
        writes (an optimizer's, say) touch no saved tensor, view or shared array: they
        return at once."""
        if self._state != "open":
            return None
        if spec.name in SLOPED:
            self._negative_slope(spec, args, kwargs, targets)
        if self.deep:
            # The dispatch mode sees the elements written (`x[0, 1] = v` writes a
            # temporary view of `x`); the call shows which tensor the user wrote through.
            if spec.data and any(t._is_view() for t in targets):
                call = patches.Call(spec, args, kwargs, targets)
                with self._lock:
                    for tensor in targets:
                        if tensor._is_view():
                            self._check_overlap(spec.name, tensor, 0, OpInputs([]), call.site)
                            self._remember_view_write(spec.name, tensor, call.site)
            return None
        if not (self._saved or self._numpy or self._view_writes or self._watches or (
                spec.data and patches.any_view(args, kwargs, self._tensor_type))):
            return None
        call = patches.Call(spec, args, kwargs, targets)
        with self._lock:
            note = self._before_write(spec.name, targets, call.site, spec.data, call.inputs,
                                      args)
        if note is not None:
            note.call = call
        return note

    def _negative_slope(self, spec: WriteSpec, args: tuple[Any, ...], kwargs: dict[str, Any],
                        targets: list[Any]) -> None:
        """An in-place `leaky_relu` with a negative slope, `elu`/`celu` with a negative alpha,
        on a tensor that requires grad with grad mode on: its backward refuses it."""
        found = negative_parameter(spec.name, args, kwargs)
        if found is None or not self._torch.is_grad_enabled() or not any(
                getattr(t, "requires_grad", False) for t in targets):
            return
        keyword, value = found
        setting = f"{keyword}={value}" if keyword.isidentifier() else f"{keyword} = {value}"
        call = patches.Call(spec, args, kwargs, targets)
        with self._lock:
            where, runs = written_where(call.site())
            if self._reported(Hazard.NEGATIVE_SLOPE, where):
                return
            self._report(
                Hazard.NEGATIVE_SLOPE, where,
                f"in-place `{spec.name}` with {setting} on a tensor that requires grad: "
                "a backward pass through it raises (\"backward calculation is triggered with "
                "a negative slope\"); use the out-of-place call (`inplace=False`)",
                runs, [(f"written by `{spec.name}`", t) for t in targets],
                made_then(None, "written", where, spec.name))

    def _wrote(self, note: _WriteNote) -> None:
        with self._lock:
            self._settle_write(note)
        call = note.call
        if self._watches and call is not None:
            where = call.site()
            if where is not None:
                for callback in self._watches.get((where.filename, where.line), ()):
                    callback(OpEvent(call.spec.name, call.args, call.kwargs, None, where,
                                     tuple(call.targets)))

    def _before_write(self, op: str, targets: list[Any], site: LazySite, data: bool,
                      inputs: Callable[[], list[Any]],
                      args: tuple[Any, ...] = ()) -> _WriteNote | None:
        note = None
        if self._watches:
            note = _WriteNote(op, site, targets)
        read: list[Any] | None = None
        if self._view_writes or self._numpy:
            # The op reads its inputs before it writes: a read of the bytes this very write
            # is about to change (`x[1:4] = <x[1:4] scaled in place>`) is not a read after it.
            read = inputs()
            self._reads(read, site, op)
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

                    note = note or _WriteNote(op, site, targets)
                    for record in records:
                        saved = record.current()
                        if saved is not None:
                            note.pending.append((record, saved._version, tensor,
                                                 shares_memory(tensor, saved)))
            if self._numpy:
                share = self._numpy.get(key)
                if share is not None:
                    note = note or _WriteNote(op, site, targets)
                    note.shares.append(share)
                    self._torch_side_write(op, share, site, tensor)
            if data:
                if read is None:
                    read = inputs()
                self._check_overlap(op, tensor, key, OpInputs(read), site, args)
            if tensor._is_view():
                self._remember_view_write(op, tensor, site)
            if self._view_writes:
                # A write through the base itself replaces what the view wrote.
                self._view_writes.pop(id(tensor), None)
            if self._numpy:
                self._reads(targets, site, op)
        return note

    def _settle_write(self, note: _WriteNote) -> None:
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
                    made = self._view_site(writer)
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

    def _torch_side_write(self, op: str, share: NumpyShare, site: LazySite,
                          tensor: Any) -> None:
        if share.user_holds_array() and not self._reported(Hazard.NUMPY_SHARED, site()):
            self._report(
                Hazard.NUMPY_SHARED, site(),
                f"in-place `{op}` writes memory shared with a NumPy array that is still alive; "
                "the array changes too", [("shared with NumPy here", share.site)],
                [(f"written by `{op}`", tensor)],
                [("shared", share.site, None, "NumPy"), ("written", site(), None, op)])

    def _reads(self, tensors: list[Any], site: Callable[[], Site | None], op: str) -> None:
        """Tensors an operation reads: the base of a view written earlier (AL201), memory a
        NumPy array changed (AL301)."""
        for tensor in tensors:
            if self._view_writes:
                self._check_read(tensor)
            if self._numpy:
                self._numpy_read(tensor, site, op)

    def _numpy_read(self, tensor: Any, site: Callable[[], Site | None], op: str) -> None:
        storage = storage_of(tensor)
        share = self._numpy.get(id(storage)) if storage is not None else None
        if share is None or not share.changed_by_numpy(tensor):
            return
        what = f"`{op}`" if op else "this operation"
        self._report(
            Hazard.NUMPY_SHARED, site(),
            f"{what} reads memory a NumPy array shares, which was written from the NumPy side "
            "since torch last saw it (no torch write moved its version counter): the tensor "
            "changed with the array", [("shared with NumPy here", share.site)],
            [(f"read by {what}", tensor)],
            [("shared", share.site, None, "NumPy"), ("read", site(), None, op)])

    def _check_read(self, tensor: Any) -> None:
        """AL201: is ``tensor`` the base of a view written earlier, or another view over
        the written bytes?  The elements written and read must intersect."""
        base = tensor
        pending = self._view_writes.get(id(base))
        if pending is None or pending.base() is not base:
            base = tensor._base if tensor._is_view() else None
            pending = self._view_writes.get(id(base)) if base is not None else None
            if pending is None or pending.base() is not base or pending.view() is tensor:
                return
        read = Region.of(tensor)
        overlap = pending.region.overlap(read) if pending.region and read else None
        if overlap or overlap is None and base is tensor:
            self._report_view_write(id(base), pending, overlap.note() if overlap else "")

    def _report_view_write(self, key: int, pending: _ViewWrite, note: str = "") -> None:
        del self._view_writes[key]
        read = user_site()
        self._report(
            Hazard.VIEW_WRITE_READ, pending.site,
            f"in-place `{pending.op}` through a view also changes its base, "
            f"which is read afterwards{note}",
            [("view created here", pending.view_site), ("base read here", read)],
            [("the base, read afterwards", pending.base()),
             (f"the view, written by `{pending.op}`", pending.view())],
            [*made_then((pending.view_site, ""), "written", pending.site, pending.op),
             ("read", read, None, "")])
        self._update_attention()

    def _remember_view_write(self, op: str, view, site: LazySite) -> None:
        """AL201, first half: a write through a view kept under a name of its own."""
        made = self._view_site(view)
        base = view._base
        if made is None or made[0] is None or base is None:
            return
        where = site()
        # A view made and written on one line (`x[:, 0] = 0`, `x[i].zero_()`) is how code
        # updates part of a tensor on purpose; a view made on another line was given a name.
        if where is None or (made[0].filename, made[0].line) == (where.filename, where.line):
            return
        if self._reported(Hazard.VIEW_WRITE_READ, where):
            return
        key = id(base)
        self._view_writes[key] = _ViewWrite(
            weakref.ref(base, functools.partial(self._forget_view_write, key)),
            weakref.ref(view), op, where, made[0], Region.of(view),
        )
        self._update_attention()

    def _forget_view_write(self, key: int, _ref) -> None:
        pending = self._view_writes.get(key)
        if pending is not None and pending.base() is None:
            del self._view_writes[key]

    def _check_overlap(self, op: str, tensor, storage: int, inputs: OpInputs,
                       site: LazySite, args: tuple[Any, ...] = ()) -> None:
        """AL203: the destination overlaps itself, or an input overlaps it partially: the
        elements an input covers differ from those written and intersect them.  Copying a
        view onto the very elements it covers (``x[1:4] += 1`` ends with
        ``x[1:4] = <that view>``) is not a hazard."""
        if tensor._is_view() and self._torch._debug_has_internal_overlap(tensor) == 1:
            if self._reported(Hazard.OVERLAPPING_WRITE, site()):
                return
            made = self._view_site(tensor)
            self._report(
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
            if self._reported(Hazard.OVERLAPPING_WRITE, site()):
                return
            made = self._view_site(other)
            self._report(
                Hazard.OVERLAPPING_WRITE, site(),
                f"in-place `{op}` reads an input that partially overlaps the memory it "
                f"writes; the result depends on the order elements are visited{overlap.note()}",
                [("overlapping view created here", made[0])] if made else [],
                [(f"written by `{op}`", tensor), (f"read by `{op}`", other)],
                made_then(made, "written", site(), op))
            return

    # -- views ----------------------------------------------------------------------------

    def _view_site(self, tensor) -> tuple[Site | None, str] | None:
        """Where the view with ``tensor``'s layout was made, and by what, if known."""
        try:
            key = layout_of(tensor)
        except NO_STORAGE:
            return None
        entry = self._view_sites.get(key) if key is not None else None
        if entry is None or entry[0]() is None:
            return None
        return entry[1], entry[2]

    def _remember_view(self, op: str, output: Any, site: Site | None) -> None:
        storage = storage_of(output)
        if storage is None:
            return
        sites = self._view_sites
        if len(sites) >= _MAX_VIEW_SITES:
            sites.clear()
        sites[(id(storage), output.storage_offset(), tuple(output.shape), output.stride())] = (
            weakref.ref(storage), site, op)

    def _made_view(self, op: str, source: Any, result: Any, site: Site | None,
                   args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """A wrapped call made a view (the default tracer's views)."""
        if self._state != "open":
            return
        if op == "detach" and not getattr(source, "requires_grad", False):
            return
        outputs = result if isinstance(result, (list, tuple)) else (result,)
        with self._lock:
            for output in outputs:
                if isinstance(output, self._tensor_type) and (
                        op == "detach" or output._is_view()):
                    self._remember_view(op, output, site)
        if self._watches and not self.deep and site is not None:
            for callback in self._watches.get((site.filename, site.line), ()):
                callback(OpEvent(op, args, kwargs, result, site))

    # -- the deep mode's work -------------------------------------------------------------

    def _observe(self, op, facts: OpFacts | None, args: tuple, kwargs: dict):
        """Everything but the dispatch mode's fast path: writes, views, reads, watches."""
        torch = self._torch
        if self._state != "open" or torch.compiler.is_compiling():
            return op(*args, **kwargs)
        tensor_type = self._tensor_type
        site = LazySite(patches.wrapped_caller_is_user())
        with self._lock:
            if self._unresolved:
                self._resolve()
            writes = written(facts, args, kwargs, tensor_type)
            written_ids = {id(w) for w in writes}
            inputs = [t for t in patches.inputs_of(args, kwargs, tensor_type, writes)
                      if id(t) not in written_ids]
            if not (facts is not None and facts.makes_view):
                self._reads(inputs, site, facts.name if facts else op.overloadpacket.__name__)
            if writes and facts is not None:
                try:
                    note = self._before_write(facts.name, writes, site, facts.data,
                                              lambda: inputs)
                except NO_STORAGE:
                    note = None  # sparse, nested and subclass tensors are skipped
                if note is not None and (note.pending or note.shares):
                    # The version counter moves after the kernel, above this mode: settled
                    # later, so the line is found now.
                    site()
                    self._unresolved.append(note)
            self._update_attention()
        result = op(*args, **kwargs)
        if facts is not None and facts.makes_view:
            self._record_views(facts.name, args, result, site)
        if self._watches:
            where = site()
            if where is not None:
                for callback in self._watches.get((where.filename, where.line), ()):
                    callback(OpEvent(op.overloadpacket.__name__, args, kwargs, result, where,
                                     tuple(writes), op))
        return result

    def _record_views(self, op: str, args: tuple, result, site: LazySite) -> None:
        # Views autograd makes while running backward cannot be named by user code, and a
        # detached alias matters only for a tensor that requires grad.
        if (self._torch._C._current_autograd_node() is not None
                or op == "detach" and not (args and getattr(args[0], "requires_grad", False))
                or getattr(self._local, "packing", False)):
            return
        outputs = result if isinstance(result, (list, tuple)) else (result,)
        with self._lock:
            for output in outputs:
                if isinstance(output, self._tensor_type):
                    try:
                        self._remember_view(op, output, site())
                    except NO_STORAGE:
                        continue

    def _resolve(self) -> None:
        """Settle the deep mode's writes, now that autograd has moved version counters."""
        pending, self._unresolved = self._unresolved, []
        for note in pending:
            self._settle_write(note)
        self._update_attention()

    # -- saved-tensor hooks ---------------------------------------------------------------

    def _record(self, tensor, inner: Any = None, nested: bool = False) -> _Saved | None:
        try:
            storage = tensor.untyped_storage()
            version = tensor._version
        except NO_STORAGE:  # no plain storage, or an inference tensor (no version counter)
            return None
        node = tensor.grad_fn
        # Autograd creates an op's node before it saves the inputs and saves the outputs
        # right after; an output is thus a tensor whose node is the newest one.
        is_output = (node is not None
                     and node._sequence_nr() == self._torch._C._autograd._get_sequence_nr() - 1)
        if nested:
            kept, original = None, weakref.ref(tensor)
        elif is_output:
            kept, original = self._detach(tensor), None
        else:
            kept, original = tensor, None
        site = user_site()
        # The node's class names it (`SigmoidBackward0`) without holding on to it.
        record = _Saved(kept, original, inner, version, site, tensor.requires_grad, is_output,
                        type(node).__name__ if node is not None else "", tensor.output_nr)
        key = id(storage)
        self._saved.setdefault(key, []).append(weakref.ref(record, functools.partial(self._forget_saved, key)))
        if self._view_writes or self._numpy:
            with self._lock:
                # Saving is reading: the op that saves this tensor has it as an operand.
                self._reads([tensor], lambda: site, "")
        return record

    def _detach(self, tensor):
        """A detached alias, made by torch's own method (not a wrapper, not a recorded view)."""
        self._local.packing = True
        try:
            return self._torch._C.TensorBase.detach(tensor)
        finally:
            self._local.packing = False

    def _forget_saved(self, key: int, ref: weakref.ref) -> None:
        """Autograd freed a record: its storage's key may now name another storage."""
        with self._lock:
            refs = self._saved.get(key)
            if refs is not None:
                try:
                    refs.remove(ref)
                except ValueError:
                    pass
                if not refs:
                    del self._saved[key]

    def _pack(self, tensor):
        if self._state != "open":
            return tensor
        record = self._record(tensor)
        return tensor if record is None else record

    def _unpack(self, record):
        if type(record) is not _Saved:
            return record
        self._unpacked += 1
        if self._unresolved:
            with self._lock:
                self._resolve()
        tensor = record.tensor
        if tensor._version != record.version:
            with self._lock:
                self._saved_write_read(record, raises=True)
            raise RuntimeError(version_error(record, self._torch.is_anomaly_enabled()))
        if record.overwritten_at is not None or self._numpy:
            with self._lock:
                self._saved_tensor_read(record, tensor)
        return tensor

    def _nest_hooks(self, pack: Callable[[Any], Any],
                    unpack: Callable[[Any], Any]) -> tuple[Callable[[Any], Any],
                                                           Callable[[Any], Any]]:
        """The program's saved-tensor hooks, run inside the tracer's: its ``pack`` keeps
        what it wants; the tracer records the tensor, and when backward unpacks it checks
        whether what the program's ``unpack`` gives back is memory written meanwhile (as
        with activation checkpointing, which recomputes from the current inputs).  torch
        runs no version check under such hooks, so neither does the tracer raise."""

        def nested_pack(tensor):
            packed = pack(tensor)
            if self._state != "open":
                return packed
            record = self._record(tensor, packed, nested=True)
            return packed if record is None else record

        def nested_unpack(packed):
            if type(packed) is not _Saved:
                return unpack(packed)
            tensor = unpack(packed.inner)
            self._unpacked += 1
            original = packed.current()
            if original is not None and self._state == "open":
                from aliaslint.memory import shares_memory

                with self._lock:
                    if original._version != packed.version and shares_memory(original, tensor):
                        self._saved_write_read(packed, raises=False)
                    elif packed.overwritten_at is not None or self._numpy:
                        self._saved_tensor_read(packed, tensor)
            return tensor

        return nested_pack, nested_unpack

    def _saved_write_read(self, record: _Saved, raises: bool) -> None:
        """AL101 / AL104: backward reads a saved tensor written since it was saved."""
        backward = user_site()
        saver = f" by `{forward_op_name(record.node_name)}`" if record.is_output else ""
        outcome = ("backward raises \"modified by an inplace operation\"" if raises else
                   "backward computes from the new values")
        related: list[tuple[str, Site | None]] = [("saved for backward here", record.site)]
        story = history(record, backward)
        if record.modified_at is None:
            # Written by a call the default tracer does not wrap (torch's C++ code).
            self._report(
                Hazard.SAVED_WRITTEN, record.site,
                f"a tensor saved for backward here{saver} was written in place before the "
                f"backward pass read it, by an operation the trace did not see (`--deep` "
                f"shows it); {outcome}",
                [("backward runs here", backward)], **story)
            return
        if record.modified_detached:
            related.append(("detached here", record.detach_site))
            related.append(("backward runs here", backward))
            self._report(
                Hazard.DETACHED_WRITTEN, record.modified_at,
                f"in-place `{record.modified_op}` on a `.detach()` alias changes a tensor that "
                f"autograd saved for backward; {outcome}", related, **story)
            return
        related.append(("backward runs here", backward))
        where, runs = written_where(record.modified_at)  # an in-place module's: where built
        self._report(
            Hazard.MODULE_SAVED_WRITTEN if runs else Hazard.SAVED_WRITTEN, where,
            f"in-place `{record.modified_op}` writes a tensor that autograd saved for "
            f"backward{saver}; {outcome}", runs + related, **story)

    def _saved_tensor_read(self, record: _Saved, tensor: Any) -> None:
        """AL103 and AL301 when backward reads a saved tensor whose counter did not move."""
        if record.overwritten_at is not None:
            backward = user_site()
            self._report(
                Hazard.UNCOUNTED_WRITTEN, record.overwritten_at,
                f"in-place `{record.overwritten_op}` through an alias with its own version "
                "counter (`.data`) changes a tensor saved for backward; autograd cannot "
                "notice and computes the gradient from the new values",
                [("saved for backward here", record.site), ("backward runs here", backward)],
                **history(record, backward))
        if self._numpy:
            self._numpy_read(tensor, user_site, "backward")

    # -- NumPy ----------------------------------------------------------------------------

    def _shared_with_numpy(self, tensor, array, site: Site | None, from_numpy: bool) -> None:
        if self._state != "open":
            return
        storage = storage_of(tensor)
        if storage is None:
            return
        key = id(storage)
        with self._lock:
            share = self._numpy.get(key)
            if share is not None and share.array() is array:
                if from_numpy and share.torch_refs:
                    share.torch_refs += 1
                share.add_tensor(tensor)
                return
            self._numpy[key] = NumpyShare(array, tensor, site, from_numpy)
            # The entry lives as long as the storage: its key is valid that long.
            weakref.finalize(storage, self._numpy.pop, key, None)
            self._update_attention()


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
