"""The default tracer's hooks: wrappers around the torch calls that write, make views or
share memory with NumPy, installed while a trace is open and removed when the last closes.

Which calls those are comes from the generated op tables (``aliaslint.ops``): every
``torch.Tensor`` method and ``torch`` function of kind ``inplace`` (``add_``, ``__iadd__``,
``__setitem__``, ``index_put_``, ``relu_``, ``_foreach_mul_``, ``_fused_adamw_`` ...), every
``torch`` function that takes ``out=`` (it writes only when ``out=`` is given), the
functions that write an argument besides their result (``batch_norm``'s running
statistics), ``torch.nn.functional`` calls with an ``inplace`` switch, and the view-making
methods and functions (kind ``view``, ``torch.linalg.diagonal`` among them, basic indexing,
and the sometimes-aliasing ones such as ``reshape``).  Every other call runs without any
Python of ours in between.

A wrapper costs a Python call.  A write hands the tensors it writes to each open observer
(``aliaslint.runtime.observer``: the tracers) before and after the call; torch's own refusal
(an exception) is shown to the observers and re-raised as it was, with the wrapper's frame
taken out of its traceback.  A view is handed over only when user code made it directly, or
when it is one autograd will refuse to let be written (an output of
``split``/``unbind``/``chunk``, a view made under ``no_grad``, an ``expand``).  Nothing is
done while ``torch.compile`` traces, or for calls torch makes while already inside a wrapped
call.

``Function.apply`` and ``FunctionCtx.mark_dirty`` are wrapped too: while a custom Function's
``forward`` runs with an input that requires grad (and grad mode on), writes to that input are
noted, so one ``forward`` makes without ``mark_dirty`` is reported; and the errors torch raises
at ``apply`` go by the observers as those of the wrapped writes do.

What is installed, and for whom, is the state of one ``Patches`` object, which the tracers
share (torch is one per process); this module knows the tracers only as observers.
"""

from __future__ import annotations

import functools
import inspect
import sys
import threading
from collections.abc import Callable
from types import FrameType, FunctionType
from typing import Any

from aliaslint.runtime import sites, snapshots
from aliaslint.runtime.observer import Call, EntryPointObserver, WriteSpec, inputs_of
from aliaslint.runtime.sites import LazySite, Site, frame_site, user_code, user_filename
from aliaslint.runtime.wrap_plan import inplace_modules, plan

Observers = list[EntryPointObserver[Any]]

# --- the wrappers ---------------------------------------------------------------------------


def _writer(original: Callable[..., Any], spec: WriteSpec, tensor_type: type,
            compiling: Callable[[], bool], observers: Observers,
            local: threading.local) -> Callable[..., Any]:
    @functools.wraps(original)
    def traced(*args: Any, **kwargs: Any) -> Any:
        if compiling() or not observers or local.__dict__.get("busy"):
            return original(*args, **kwargs)
        targets = spec.targets(args, kwargs, tensor_type)
        if not targets:  # `out=` or `inplace=` not given: nothing is written
            return original(*args, **kwargs)
        local.busy = True
        local.direct = user_code(sys._getframe(1).f_code)
        if snapshots.MARKS and local.direct:  # a write of the user's, snapshots alive
            snapshots.user_write(spec.name, spec.data, targets,
                                 inputs_of(args, kwargs, tensor_type, targets))
        forwarding = local.__dict__.get("forward")
        if forwarding is not None:  # inside a custom Function's forward
            _forward_wrote(forwarding, targets, spec.name)
        try:
            notes = [observer.will_write(spec, args, kwargs, targets) for observer in observers]
            result = original(*args, **kwargs)
        except BaseException as error:
            local.busy = False
            call = Call(spec, args, kwargs, targets)
            for observer in observers:
                observer.refused(call, error)
            # The program sees the exception torch raised, from the line that called.
            if error.__traceback__ is not None:
                error.__traceback__ = error.__traceback__.tb_next
            raise
        local.busy = False
        for observer, note in zip(observers, notes):
            if note is not None:
                observer.wrote(note)
        return result

    return traced


class _Input:
    """An input of a custom Function's ``forward`` that requires grad: its version before
    the call, whether ``ctx.mark_dirty`` named it, and the first write to it."""

    __slots__ = ("tensor", "version", "dirty", "op", "site")

    def __init__(self, tensor: Any) -> None:
        self.tensor, self.version, self.dirty = tensor, tensor._version, False
        self.op = ""
        self.site: Site | None = None


def _forward_wrote(inputs: dict[int, _Input], targets: list[Any], op: str) -> None:
    """A write inside a custom Function's ``forward``: the first one to each input (or to a
    view of it) is where the input was written."""
    for tensor in targets:
        entry = inputs.get(id(tensor))
        if entry is None and tensor._is_view():
            entry = inputs.get(id(tensor._base))
        if entry is not None and not entry.op:
            entry.op, entry.site = op, LazySite()()


def _view_site(frame: FrameType, special: bool) -> Site | None:
    """The site of a view: the caller's line when user code called, else (for the views
    autograd refuses to let be written) the innermost user line."""
    if user_code(frame.f_code):
        return frame_site(frame)
    if special:
        from aliaslint.runtime.sites import user_site

        return user_site()
    return None


def _viewer(original: Callable[..., Any], name: str, always: bool, multi: bool,
            compiling: Callable[[], bool], grad_enabled: Callable[[], bool],
            observers: Observers, local: threading.local) -> Callable[..., Any]:
    @functools.wraps(original)
    def traced(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        if not observers or compiling() or getattr(local, "busy", False):
            return result
        source = args[0] if args else None
        special = always or (getattr(source, "requires_grad", False)
                             and (multi or not grad_enabled()))
        site = _view_site(sys._getframe(1), special)
        if site is not None:
            for observer in observers:
                observer.made_view(name, source, result, site, args, kwargs)
        return result

    return traced


def _property_viewer(descriptor: Any, name: str, compiling: Callable[[], bool],
                     observers: Observers, local: threading.local) -> property:
    def get(self: Any) -> Any:
        result = descriptor.__get__(self)
        if observers and not compiling() and not getattr(local, "busy", False):
            site = _view_site(sys._getframe(1), False)
            if site is not None:
                for observer in observers:
                    observer.made_view(name, self, result, site, (self,), {})
        return result

    def set(self: Any, value: Any) -> None:
        descriptor.__set__(self, value)  # raises as torch does for a read-only attribute

    return property(get, set, doc=getattr(descriptor, "__doc__", None))


def _builder(original: Callable[..., Any], compiling: Callable[[], bool],
             observers: Observers) -> Callable[..., Any]:
    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        if observers and getattr(self, "inplace", False) is True and not compiling():
            # Built by the user's own call (or the user's subclass): not by a library, and
            # not by a subclass of torch's (`nn.ReLU6` calls `Hardtanh.__init__`).
            frame = sys._getframe(1)
            if user_code(frame.f_code):
                sites.built(self, frame_site(frame))

    return __init__


def _defaults(torch: Any, replacements: tuple[tuple[Any, str, Any], ...]
              ) -> tuple[tuple[Any, str, Any], ...]:
    """(method, ``"__defaults__"`` or ``"__kwdefaults__"``, its value with each wrapped
    function in it replaced by the wrapper) for the methods of torch.nn's classes whose
    defaults hold a function the trace wraps: ``activation=F.relu`` of the
    ``nn.Transformer*`` classes.  A module built with the default then holds the
    ``F.relu`` that the trace has, as it does untraced: ``torch.save`` of the module can
    pickle it (pickle finds a function by name and refuses one that is not what the name
    gives), and ``activation is F.relu`` holds.  Read before the first install of these
    ``replacements``."""
    wrapped: dict[int, tuple[Any, Any]] = {}
    for owner, attribute, replacement in replacements:
        original = owner.__dict__.get(attribute) if isinstance(owner, type) else getattr(
            owner, attribute, None)
        if isinstance(original, staticmethod) and isinstance(replacement, staticmethod):
            original, replacement = original.__func__, replacement.__func__
        if original is not None:
            wrapped[id(original)] = (original, replacement)

    def swapped(values: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(wrapped[id(v)][1] if id(v) in wrapped and wrapped[id(v)][0] is v else v
                     for v in values)

    found: list[tuple[Any, str, Any]] = []
    seen: set[int] = set()
    for name in dir(torch.nn):
        cls = getattr(torch.nn, name, None)
        if not isinstance(cls, type):
            continue
        for member in list(vars(cls).values()):
            function = getattr(member, "__func__", member)
            if not isinstance(function, FunctionType) or id(function) in seen:
                continue
            seen.add(id(function))
            defaults, keywords = function.__defaults__, function.__kwdefaults__
            if defaults:
                values = swapped(defaults)
                if any(a is not b for a, b in zip(values, defaults)):
                    found.append((function, "__defaults__", values))
            if keywords:
                mapping = dict(zip(keywords, swapped(tuple(keywords.values()))))
                if any(mapping[k] is not keywords[k] for k in keywords):
                    found.append((function, "__kwdefaults__", mapping))
    return tuple(found)


def _install_extras(torch: Any, observers: Observers, per_thread: threading.local,
                    replace: Callable[[Any, str, Any], None]) -> Callable[..., Any]:
    """Custom ``autograd.Function``s, NumPy sharing, and saved-tensor hooks of the program;
    returns torch's own push of saved-tensor hooks, which the last of them replaces."""
    function = torch.autograd.function.Function
    original_apply = function.__dict__["apply"]
    tensor_type = torch.Tensor

    def apply(cls: Any, *args: Any, **kwargs: Any) -> Any:
        if not observers or torch.compiler.is_compiling():
            return original_apply.__func__(cls, *args, **kwargs)
        from aliaslint.runtime.sites import user_site

        local = per_thread.__dict__
        outer = local.get("forward")
        # The inputs `forward` may write without saying so: those that require grad, with
        # grad mode on (otherwise autograd records nothing of the call).
        inputs: dict[int, _Input] = {}
        if torch.is_grad_enabled():
            for value in (*args, *kwargs.values()) if kwargs else args:
                if isinstance(value, tensor_type) and value.requires_grad:
                    inputs[id(value)] = _Input(value)
        local["forward"] = inputs or outer
        try:
            result = original_apply.__func__(cls, *args, **kwargs)
        except BaseException as error:
            local["forward"] = outer
            site = user_site()
            forward = _definition_site(cls)
            for observer in observers:
                observer.function_refused(cls.__name__, site, error, forward)
            if error.__traceback__ is not None:
                error.__traceback__ = error.__traceback__.tb_next
            raise
        local["forward"] = outer
        outputs = result if isinstance(result, (tuple, list)) else (result,)
        written = [entry for entry in inputs.values()
                   if not entry.dirty and entry.tensor._version != entry.version]
        views = [o for o in outputs if isinstance(o, tensor_type) and o._is_view()]
        if views or written:
            site = user_site()
            for observer in observers:
                for view in views:
                    observer.made_view(cls.__name__, None, view, site, (), {})
                for entry in written:
                    observer.function_wrote_input(cls.__name__, entry.op or "an in-place op",
                                                  entry.site, site)
        return result

    functools.update_wrapper(apply, original_apply.__func__)
    replace(function, "apply", classmethod(apply))

    context = torch.autograd.function.FunctionCtx
    mark_dirty = context.mark_dirty

    @functools.wraps(mark_dirty)
    def traced_mark_dirty(self: Any, *tensors: Any) -> None:
        inputs = per_thread.__dict__.get("forward")
        if inputs:
            for tensor in tensors:
                entry = inputs.get(id(tensor))
                if entry is not None:
                    entry.dirty = True
        mark_dirty(self, *tensors)

    replace(context, "mark_dirty", traced_mark_dirty)

    from_numpy, numpy = torch.from_numpy, torch.Tensor.numpy

    @functools.wraps(from_numpy)
    def traced_from_numpy(array: Any) -> Any:
        tensor = from_numpy(array)
        if observers and not torch.compiler.is_compiling():
            from aliaslint.runtime.sites import user_site

            site = user_site()
            for observer in list(observers):
                observer.shared_with_numpy(tensor, array, site, from_numpy=True)
        return tensor

    @functools.wraps(numpy)
    def traced_numpy(self: Any, *args: Any, **kwargs: Any) -> Any:
        array = numpy(self, *args, **kwargs)
        if observers and not torch.compiler.is_compiling():
            from aliaslint.memory import shares_memory

            if shares_memory(self, array):
                from aliaslint.runtime.sites import user_site

                site = user_site()
                for observer in list(observers):
                    observer.shared_with_numpy(self, array, site, from_numpy=False)
        return array

    replace(torch, "from_numpy", traced_from_numpy)
    replace(torch.Tensor, "numpy", traced_numpy)

    autograd = torch._C._autograd
    push = autograd._push_saved_tensors_default_hooks

    @functools.wraps(push)
    def push_nested(pack: Callable[[Any], Any], unpack: Callable[[Any], Any]) -> Any:
        # The program's own saved-tensor hooks (activation checkpointing, save_on_cpu)
        # replace the tracer's inside their block: run them inside the tracer's instead.
        for observer in reversed(observers):
            pack, unpack = observer.nest_hooks(pack, unpack)
        return push(pack, unpack)

    replace(autograd, "_push_saved_tensors_default_hooks", push_nested)
    snapshots.install(torch, replace, observers)
    return push


def _definition_site(cls: Any) -> Site | None:
    """The line that defines ``cls.forward``, when it is user code."""
    code = getattr(getattr(cls, "forward", None), "__code__", None)
    if code is None or not user_code(code):
        return None
    import linecache

    filename = user_filename(code)
    line = code.co_firstlineno  # the first decorator's line, when decorated
    while linecache.getline(filename, line).lstrip().startswith("@"):
        line += 1
    return Site(filename, line, code, -2)


_ABSENT = object()


# --- the installation -----------------------------------------------------------------------


class Patches:
    """The wrappers on torch's entry points, and the observers they report to.

    torch is one per process, so one ``Patches`` is shared by every observer open at a time:
    the first ``activate`` installs the wrappers, the last ``deactivate`` restores torch.
    The wrappers are built once (the first installation) and close over this object's
    observer list and thread-local flags, which are therefore never rebound, only changed.
    """

    def __init__(self) -> None:
        # Appended to and removed from in place: the wrappers hold this very list.
        self.observers: Observers = []
        self._lock = threading.Lock()
        # Per thread: `busy` inside a wrapped write, `direct` whether user code called it,
        # `forward` the inputs of the custom Function whose `forward` is running.
        self._local = threading.local()
        # (owner, attribute, the value it had) for each attribute replaced, to restore them.
        self._replaced: list[tuple[Any, str, Any]] = []
        # The push of saved-tensor hooks as torch has it, for the tracers' own hooks.
        self._original_push: Callable[..., Any] | None = None
        self._wrappers: tuple[tuple[Any, str, Any], ...] | None = None
        # torch.nn's functions whose defaults hold a function wrapped here (_defaults).
        self._default_swaps: tuple[tuple[Any, str, Any], ...] | None = None

    def activate(self, observer: EntryPointObserver[Any]) -> None:
        """Add ``observer`` to those the wrappers report to; install them for the first one."""
        with self._lock:
            if not self.observers:
                import torch

                self._install(torch)
            self.observers.append(observer)

    def deactivate(self, observer: EntryPointObserver[Any]) -> None:
        """Remove ``observer``; remove the wrappers when it was the last one."""
        with self._lock:
            if observer in self.observers:
                self.observers.remove(observer)
            if not self.observers:
                self._restore()

    def wrapped_caller_is_user(self) -> bool | None:
        """Inside a wrapped write: did user code call it itself?  None outside one."""
        local = self._local.__dict__
        return local.get("direct", False) if local.get("busy") else None

    def push_hooks(self, torch: Any, pack: Callable[[Any], Any],
                   unpack: Callable[[Any], Any]) -> None:
        """Push saved-tensor hooks past the wrapper that nests the program's own hooks."""
        push = self._original_push or torch._C._autograd._push_saved_tensors_default_hooks
        push(pack, unpack)

    # -- installing and restoring -----------------------------------------------------------

    def _install(self, torch: Any) -> None:
        replacements = self._replacements(torch)
        if self._default_swaps is None:  # read before the functions are replaced
            self._default_swaps = _defaults(torch, replacements)
        for owner, attribute, replacement in replacements:
            self._replace(owner, attribute, replacement)
        for function, attribute, value in self._default_swaps:
            self._replace(function, attribute, value)
        self._original_push = _install_extras(torch, self.observers, self._local, self._replace)
        self._install_builders(torch)

    def _replacements(self, torch: Any) -> tuple[tuple[Any, str, Any], ...]:
        """(owner, attribute, wrapper) for everything the plan wraps; built once."""
        if self._wrappers is not None:
            return self._wrappers
        compiling = torch.compiler.is_compiling
        grad_enabled = torch.is_grad_enabled
        tensor_type = torch.Tensor
        observers, local = self.observers, self._local
        made = []
        for owner, attribute, role, detail in plan(torch):
            current = owner.__dict__.get(attribute) if isinstance(owner, type) else None
            original = getattr(owner, attribute)
            if role == "write":
                replacement: Any = _writer(original, detail, tensor_type, compiling, observers,
                                           local)
            elif role == "view":
                replacement = _viewer(original, attribute, detail.self_overlapping,
                                      detail.multi_output, compiling, grad_enabled, observers,
                                      local)
            else:
                descriptor = inspect.getattr_static(owner, attribute)
                replacement = _property_viewer(descriptor, attribute, compiling, observers,
                                               local)
            if isinstance(current, staticmethod):
                replacement = staticmethod(replacement)
            made.append((owner, attribute, replacement))
        self._wrappers = tuple(made)
        return self._wrappers

    def _install_builders(self, torch: Any) -> None:
        """Where the user builds an in-place module (``nn.ReLU(inplace=True)``): a finding
        about the write its ``forward`` makes points there.  A cost at construction only."""
        compiling = torch.compiler.is_compiling
        classes, owners = inplace_modules(torch)
        for owner in owners:
            self._replace(owner, "__init__",
                          _builder(owner.__dict__["__init__"], compiling, self.observers))
        for cls in classes:
            forward = getattr(getattr(cls, "forward", None), "__code__", None)
            if forward is not None:
                sites.INPLACE_FORWARDS.add(forward)

    def _replace(self, owner: Any, attribute: str, value: Any) -> None:
        previous = owner.__dict__.get(attribute, _ABSENT) if isinstance(owner, type) else (
            getattr(owner, attribute))
        self._replaced.append((owner, attribute, previous))
        # setattr: torch's types do not foresee their functions being replaced at run time.
        setattr(owner, attribute, value)

    def _restore(self) -> None:
        while self._replaced:
            owner, attribute, previous = self._replaced.pop()
            if previous is _ABSENT:
                delattr(owner, attribute)
            else:
                setattr(owner, attribute, previous)
        self._original_push = None
        snapshots.uninstall()
