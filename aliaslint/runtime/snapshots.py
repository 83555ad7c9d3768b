"""Snapshots taken by reference (the run-time half of AL207).

``model.state_dict()`` returns the module's own parameters and buffers, detached but over the
same memory and with the same version counters; ``p.grad`` is the gradient tensor itself,
which the next ``backward()`` accumulates into in place (unless ``zero_grad()`` dropped it).
A program that keeps either as "the old values" reads the new ones once the owner has
written them.

What is followed, each at a cost paid only where it applies:

* marks: each tensor a module's ``state_dict()`` hands to user code (not with
  ``keep_vars=True``: those are the parameters themselves), each tensor of an optimizer's
  ``state_dict()["state"]`` (momentum buffers, moments, step counts: every step updates them
  in place), and the tensor a user line reads as ``.grad``.  A mark is the tensor (weakly:
  nothing is kept alive), its version and the user line: O(1) per tensor;
* the owner's writes, by the version counters they move: after an optimizer step (torch's
  global step hook), ``load_state_dict`` (a module's or an optimizer's), ``zero_grad`` and
  ``backward`` the live marks are compared with their versions (nothing is done while there
  are none); a write user code makes itself (``p.copy_(...)``) to memory a mark covers is
  seen by the write's wrapper;
* reads of a marked tensor by user code: ``load_state_dict``, ``torch.save``, the
  comparisons (``torch.equal``, ``allclose``, ``isclose``, ``dist``, ``cosine_similarity``)
  and the inputs of a write user code makes.  Other operations are not wrapped.  An
  optimizer's state tensors are its live ones (``optimizer.state[p]`` reaches the same
  objects), so for them only the first two, which are handed the whole kept state, count.

A marked tensor read after the owner wrote it is reported at the line that took it, with
where it was overwritten and read.  A ``.grad`` read again at a later line marks the
current state; it is a stale read when the tensor was written since that latest read, or
when one operation reads it twice (``allclose(g, p.grad)``: the kept name and the fresh
read are one tensor) and an earlier line had kept it before a write.  A write user code
makes through the marked tensor itself ends its mark: the program updates it on purpose.
"""

from __future__ import annotations

import functools
import sys
import threading
import weakref
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from aliaslint.runtime.evidence import Moment
from aliaslint.runtime.sites import Site, frame_site, user_code, user_site

if TYPE_CHECKING:
    from aliaslint.runtime.observer import EntryPointObserver

# id(tensor) → its mark, for the live marked tensors.
MARKS: dict[int, _Mark] = {}
# id(storage) → the ids of the marked tensors over it (user code's own writes find them).
_BY_STORAGE: dict[int, set[int]] = {}
_LOCK = threading.RLock()
_STATE: dict[str, Any] = {}

# What an optimizer's state tensors are marked as taken from.
_OPTIMIZER_STATE = "optimizer.state_dict()"
# The comparisons whose tensor arguments are reads of a kept snapshot.
_COMPARISONS = (("torch", "equal"), ("torch", "allclose"), ("torch", "isclose"),
                ("torch", "dist"), ("torch.nn.functional", "cosine_similarity"))


class _Take:
    """One user line's hold on a marked tensor: its version then, and the first write after."""

    __slots__ = ("site", "version", "written_at", "writer")

    def __init__(self, site: Site, version: int) -> None:
        self.site, self.version = site, version
        self.written_at: Site | None = None
        self.writer = ""


class _Mark:
    __slots__ = ("ref", "storage", "what", "grad", "live", "takes", "latest")

    def __init__(self, ref: weakref.ref, storage: int, what: str, grad: bool) -> None:
        self.ref, self.storage, self.what, self.grad = ref, storage, what, grad
        # The owner's own tensor object, not an alias made for the snapshot.
        self.live = what == _OPTIMIZER_STATE
        # (file, line) → the take; `latest` is the most recent one's key.
        self.takes: dict[tuple[str, int], _Take] = {}
        self.latest: tuple[str, int] = ("", 0)


def _version(tensor: Any) -> int | None:
    try:
        return int(tensor._version)
    except (RuntimeError, TypeError, AttributeError):  # inference tensors have none
        return None


def _mark(tensor: Any, site: Site, what: str, grad: bool) -> None:
    version = _version(tensor)
    if version is None:
        return
    key = id(tensor)
    with _LOCK:
        mark = MARKS.get(key)
        if mark is None or mark.ref() is not tensor:
            try:
                storage = id(tensor.untyped_storage())
            except (RuntimeError, NotImplementedError, TypeError, ValueError, AttributeError):
                return
            mark = MARKS[key] = _Mark(weakref.ref(tensor, functools.partial(_forget, key)),
                                      storage, what, grad)
            _BY_STORAGE.setdefault(storage, set()).add(key)
        where = (site.filename, site.line)
        take = mark.takes.get(where)
        if take is None or take.version != version:
            mark.takes[where] = _Take(site, version)
        mark.latest = where


def _forget(key: int, ref: weakref.ref) -> None:
    with _LOCK:
        mark = MARKS.get(key)
        if mark is not None and mark.ref is ref:
            _drop(key, mark)


def _drop(key: int, mark: _Mark) -> None:
    del MARKS[key]
    keys = _BY_STORAGE.get(mark.storage)
    if keys is not None:
        keys.discard(key)
        if not keys:
            del _BY_STORAGE[mark.storage]


def _owner_wrote(site: Site | None, writer: str) -> None:
    """After a call that may have written marked tensors: each take whose tensor's version
    moved, and that has no write yet, was overwritten here."""
    if site is None:
        return
    with _LOCK:
        for mark in tuple(MARKS.values()):
            tensor = mark.ref()
            version = _version(tensor) if tensor is not None else None
            if version is None:
                continue
            for take in mark.takes.values():
                if take.written_at is None and take.version != version:
                    take.written_at, take.writer = site, writer


def user_write(op: str, data: bool, targets: list[Any], inputs: list[Any]) -> None:
    """A write user code makes itself (from the write's wrapper, while marks exist): its
    inputs are read first; then a write through a marked tensor ends that mark, and one
    to memory a mark covers overwrites it."""
    site = user_site()
    if site is None:
        return
    _read(inputs, site, f"`{op}`")
    if not data:
        return
    with _LOCK:
        for tensor in targets:
            mark = MARKS.get(id(tensor))
            if mark is not None and mark.ref() is tensor:
                _drop(id(tensor), mark)
                continue
            try:
                keys = _BY_STORAGE.get(id(tensor.untyped_storage()))
            except (RuntimeError, NotImplementedError, TypeError, ValueError, AttributeError):
                continue
            for key in tuple(keys or ()):
                for take in MARKS[key].takes.values():
                    if take.written_at is None:
                        take.written_at, take.writer = site, f"`{op}`"


def _tensors(value: Any, tensor_type: type, depth: int = 0) -> Iterable[Any]:
    """The tensors in ``value``: itself, or the values of dicts and items of lists within."""
    if isinstance(value, tensor_type):
        yield value
    elif depth < 5 and isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item, tensor_type, depth + 1)
    elif depth < 5 and isinstance(value, (list, tuple)):
        for item in value:
            yield from _tensors(item, tensor_type, depth + 1)


def _read(tensors: list[Any], site: Site, reader: str, whole: bool = False) -> None:
    """User code reads ``tensors``: report each marked one the owner wrote since it was kept.
    ``whole``: the reader was handed a whole state (``load_state_dict``, ``torch.save``).  An
    optimizer's state tensors are the live ones the program also reaches through
    ``optimizer.state``, so only such a read shows that the kept state was the one read."""
    if not MARKS:
        return
    with _LOCK:
        for index, tensor in enumerate(tensors):
            mark = MARKS.get(id(tensor))
            if mark is None or mark.ref() is not tensor or mark.live and not whole:
                continue
            version = _version(tensor)
            latest = mark.takes.get(mark.latest)
            if version is None or latest is None:
                continue
            stale = latest if latest.version != version else None
            if stale is None and mark.grad and any(t is tensor for t in tensors[index + 1:]):
                # Read twice by one operation: the fresh `.grad` and a name kept from before.
                here = (site.filename, site.line)
                stale = next((take for where, take in mark.takes.items()
                              if where != here and take.version != version), None)
            if stale is not None:
                _report(mark, stale, site, reader, tensor, version)


def _report(mark: _Mark, take: _Take, read_at: Site, reader: str, tensor: Any,
            version: int) -> None:
    them = "it" if mark.grad else "them"
    if take.written_at is not None:
        changed = f"{take.writer} (line {take.written_at.line}) wrote {them} in place"
    else:
        changed = f"an operation the trace did not see wrote {them} in place"
    if mark.grad:
        kept = "`.grad` is the gradient tensor itself, not a copy"
        advice = "keep `.grad.clone()`, or let `zero_grad()` set the gradients to None"
    else:
        owner = "optimizer's state" if mark.live else "module's"
        kept = f"`{mark.what}` returns references to the {owner} tensors, not copies"
        advice = "take a copy: `copy.deepcopy(...)` or `{k: v.clone() for k, v in ...items()}`"
    message = (f"{kept}: {changed} before {reader} read the kept reference (line "
               f"{read_at.line}), which then holds the new values · {advice}")
    related: list[tuple[str, Site | None]] = [("overwritten here", take.written_at),
                                              ("read here", read_at)]
    # What the drawing shows: kept at one version, written by the owner, read at another.
    events: list[Moment] = [("shared", take.site, take.version, f"kept from `{mark.what}`"),
                            ("written", take.written_at, None, take.writer),
                            ("read", read_at, version, reader)]
    for observer in list(_STATE.get("observers", ())):
        observer.snapshot_overwritten(take.site, message, related,
                                      [(f"kept from `{mark.what}`", tensor)], events)


# --- the wrappers ----------------------------------------------------------------------------


def _caller_site(frame: Any) -> Site | None:
    """The caller's site when it is user code, else the innermost user line."""
    return frame_site(frame) if user_code(frame.f_code) else user_site()


def _from_the_caller(error: BaseException) -> None:
    """The program sees what torch raised as a plain run shows it: without this wrapper's
    frame (a traceback cut at aliaslint's frames would lose torch's below it)."""
    if error.__traceback__ is not None:
        error.__traceback__ = error.__traceback__.tb_next


def install(torch: Any, replace: Callable[[Any, str, Any], None],
            observers: list[EntryPointObserver[Any]]) -> None:
    """Wrap what takes, writes and reads snapshots (``replace`` records each attribute for
    the patches' restore) for ``observers`` (the patches' list, changed in place as tracers
    open and close); ``uninstall`` removes the step hook and forgets the marks."""
    _STATE["observers"] = observers
    compiling = torch.compiler.is_compiling
    tensor_type = torch.Tensor
    module = torch.nn.Module
    state_dict, load_state_dict = module.state_dict, module.load_state_dict

    @functools.wraps(state_dict)
    def traced_state_dict(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = state_dict(self, *args, **kwargs)
        if not observers or compiling() or kwargs.get("keep_vars") or len(args) > 2 and args[2]:
            return result
        frame = sys._getframe(1)
        if user_code(frame.f_code) and isinstance(result, dict):
            site = frame_site(frame)
            for value in result.values():
                if isinstance(value, tensor_type):
                    _mark(value, site, "state_dict()", grad=False)
        return result

    optimizer = torch.optim.Optimizer
    optimizer_state_dict = optimizer.state_dict

    @functools.wraps(optimizer_state_dict)
    def traced_optimizer_state_dict(self: Any, *args: Any, **kwargs: Any) -> Any:
        # The per-parameter state (momentum buffers, moments, step counts) is handed out
        # as the optimizer's own tensors, which each step updates in place.
        result = optimizer_state_dict(self, *args, **kwargs)
        if not observers or compiling():
            return result
        frame = sys._getframe(1)
        if user_code(frame.f_code) and isinstance(result, dict):
            site = frame_site(frame)
            for value in _tensors(result.get("state"), tensor_type):
                _mark(value, site, _OPTIMIZER_STATE, grad=False)
        return result

    def loader(original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def traced_load_state_dict(self: Any, state: Any, *args: Any, **kwargs: Any) -> Any:
            if not observers or compiling() or not MARKS:
                return original(self, state, *args, **kwargs)
            site = _caller_site(sys._getframe(1))
            if site is not None:
                _read(list(_tensors(state, tensor_type)), site, "`load_state_dict`", True)
            try:
                result = original(self, state, *args, **kwargs)
            except BaseException as error:
                _from_the_caller(error)
                raise
            _owner_wrote(site, "`load_state_dict`")
            return result

        return traced_load_state_dict

    replace(module, "state_dict", traced_state_dict)
    replace(module, "load_state_dict", loader(load_state_dict))
    replace(optimizer, "state_dict", traced_optimizer_state_dict)
    replace(optimizer, "load_state_dict", loader(optimizer.load_state_dict))

    def reader(original: Callable[..., Any], name: str) -> Callable[..., Any]:
        @functools.wraps(original)
        def traced(*args: Any, **kwargs: Any) -> Any:
            if MARKS and observers and not compiling():
                site = _caller_site(sys._getframe(1))
                if site is not None:
                    _read(list(_tensors((*args, *kwargs.values()), tensor_type)), site,
                          f"`{name}`", whole=name == "save")
            try:
                return original(*args, **kwargs)
            except BaseException as error:
                _from_the_caller(error)
                raise

        return traced

    for owner_name, name in (*_COMPARISONS, ("torch", "save")):
        owner = torch.nn.functional if owner_name == "torch.nn.functional" else torch
        replace(owner, name, reader(getattr(owner, name), name))

    def writer(original: Callable[..., Any], name: str) -> Callable[..., Any]:
        @functools.wraps(original)
        def traced(*args: Any, **kwargs: Any) -> Any:
            try:
                result = original(*args, **kwargs)
            except BaseException as error:
                _from_the_caller(error)
                raise
            if MARKS and observers and not compiling():
                _owner_wrote(user_site(), name)
            return result

        return traced

    replace(module, "zero_grad", writer(module.zero_grad, "`zero_grad`"))
    replace(optimizer, "zero_grad", writer(optimizer.zero_grad, "`zero_grad`"))
    replace(torch.autograd, "backward", writer(torch.autograd.backward, "`backward()`"))

    def stepped(opt: Any, args: Any, kwargs: Any) -> None:
        if MARKS and observers and not compiling():
            _owner_wrote(user_site(), f"`{type(opt).__name__}.step()`")

    from torch.optim.optimizer import register_optimizer_step_post_hook

    _STATE["step_hook"] = register_optimizer_step_post_hook(stepped)

    descriptor = torch._C.TensorBase.__dict__["grad"]

    def get_grad(self: Any) -> Any:
        grad = descriptor.__get__(self)
        if grad is not None and observers:
            frame = sys._getframe(1)
            if user_code(frame.f_code) and not compiling():
                _mark(grad, frame_site(frame), ".grad", grad=True)
        return grad

    replace(tensor_type, "grad", property(get_grad, descriptor.__set__, descriptor.__delete__,
                                          doc=descriptor.__doc__))


def uninstall() -> None:
    handle = _STATE.pop("step_hook", None)
    if handle is not None:
        handle.remove()
    with _LOCK:
        MARKS.clear()
        _BY_STORAGE.clear()
