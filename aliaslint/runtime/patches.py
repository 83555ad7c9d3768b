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

A wrapper costs a Python call.  A write hands the tensors it writes to each open tracer
before and after the call; torch's own refusal (an exception) is shown to the tracers and
re-raised as it was, with the wrapper's frame taken out of its traceback.  A view is
handed over only when user code made it directly, or when it is one autograd will refuse
to let be written (an output of ``split``/``unbind``/``chunk``, a view made under
``no_grad``, an ``expand``).  Nothing is done while ``torch.compile`` traces, or for calls
torch makes while already inside a wrapped call.

``Function.apply`` and ``FunctionCtx.mark_dirty`` are wrapped too: while a custom Function's
``forward`` runs with an input that requires grad (and grad mode on), writes to that input are
noted, so one ``forward`` makes without ``mark_dirty`` is reported; and the errors torch raises
at ``apply`` go by the tracers as those of the wrapped writes do.
"""

from __future__ import annotations

import functools
import inspect
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType, FunctionType
from typing import TYPE_CHECKING, Any

from aliaslint.runtime import sites, snapshots
from aliaslint.runtime.dispatch import tensors_in
from aliaslint.runtime.sites import LazySite, Site, frame_site, user_code, user_filename

if TYPE_CHECKING:
    from aliaslint.runtime.tracer import Tracer

_TRACERS: list[Tracer] = []
_LOCK = threading.Lock()
_LOCAL = threading.local()
# (owner, attribute, the value it had) for each attribute replaced, to restore them.
_REPLACED: list[tuple[Any, str, Any]] = []


@dataclass(frozen=True)
class WriteSpec:
    """Where a writing call's written tensors are among its arguments."""

    name: str
    # (position, keyword) of each written argument; position -1: keyword only.
    places: tuple[tuple[int, str], ...]
    # The call writes only when this keyword is given a true value (``out=``, ``inplace=``),
    # found at this position when passed positionally (-1: keyword only).
    switch: tuple[int, str] | None = None
    # False for calls that change only sizes, strides or the storage (``set_``, ``t_``).
    data: bool = True

    def targets(self, args: tuple[Any, ...], kwargs: dict[str, Any],
                tensor_type: type) -> list[Any]:
        if self.places == _RECEIVER and self.switch is None:  # most calls: `x.add_(y)`
            return [args[0]] if args and isinstance(args[0], tensor_type) else []
        if self.switch is not None:
            position, keyword = self.switch
            value = args[position] if 0 <= position < len(args) else kwargs.get(keyword)
            # Never the truth of a tensor (`out=t` of several elements has none): the
            # switch is off when absent, None or False.
            if value is None or isinstance(value, int) and not value:
                return []
            if keyword == "out":
                return list(tensors_in((value,), tensor_type))
        found: list[Any] = []
        for position, keyword in self.places:
            value = args[position] if 0 <= position < len(args) else kwargs.get(keyword)
            if value is not None:
                found += tensors_in((value,), tensor_type)
        return found


_RECEIVER = ((0, "self"),)


def any_view(args: tuple[Any, ...], kwargs: dict[str, Any], tensor_type: Any) -> bool:
    """Is any tensor argument (one level into lists) a view?  (The written ones too.)"""
    for value in (*args, *kwargs.values()) if kwargs else args:
        if isinstance(value, tensor_type):
            if value._is_view():
                return True
        elif isinstance(value, (list, tuple)):
            for item in value:
                if isinstance(item, tensor_type) and item._is_view():
                    return True
    return False


def inputs_of(args: tuple[Any, ...], kwargs: dict[str, Any], tensor_type: type,
              written: list[Any]) -> list[Any]:
    """The tensors a call reads: its tensor arguments (one level into lists), less those
    it writes."""
    ids = {id(t) for t in written}
    return [t for t in tensors_in((*args, *kwargs.values()), tensor_type) if id(t) not in ids]


class Call:
    """One wrapped writing call: the call, the tensors it writes, and its user line."""

    __slots__ = ("spec", "args", "kwargs", "targets", "site")

    def __init__(self, spec: WriteSpec, args: tuple[Any, ...], kwargs: dict[str, Any],
                 targets: list[Any]) -> None:
        self.spec, self.args, self.kwargs, self.targets = spec, args, kwargs, targets
        # The user line that made the call (the stack is walked once, on demand).
        self.site = LazySite()

    def inputs(self) -> list[Any]:
        return inputs_of(self.args, self.kwargs, type(self.targets[0]), self.targets)


# --- the wrappers ---------------------------------------------------------------------------


def _writer(original: Callable[..., Any], spec: WriteSpec, tensor_type: type,
            compiling: Callable[[], bool]) -> Callable[..., Any]:
    @functools.wraps(original)
    def traced(*args: Any, **kwargs: Any) -> Any:
        if compiling() or not _TRACERS or _LOCAL.__dict__.get("busy"):
            return original(*args, **kwargs)
        targets = spec.targets(args, kwargs, tensor_type)
        if not targets:  # `out=` or `inplace=` not given: nothing is written
            return original(*args, **kwargs)
        _LOCAL.busy = True
        _LOCAL.direct = user_code(sys._getframe(1).f_code)
        if snapshots.MARKS and _LOCAL.direct:  # a write of the user's, snapshots alive
            snapshots.user_write(spec.name, spec.data, targets,
                                 inputs_of(args, kwargs, tensor_type, targets))
        forwarding = _LOCAL.__dict__.get("forward")
        if forwarding is not None:  # inside a custom Function's forward
            _forward_wrote(forwarding, targets, spec.name)
        try:
            notes = [tracer._will_write(spec, args, kwargs, targets) for tracer in _TRACERS]
            result = original(*args, **kwargs)
        except BaseException as error:
            _LOCAL.busy = False
            call = Call(spec, args, kwargs, targets)
            for tracer in _TRACERS:
                tracer._refused(call, error)
            # The program sees the exception torch raised, from the line that called.
            if error.__traceback__ is not None:
                error.__traceback__ = error.__traceback__.tb_next
            raise
        _LOCAL.busy = False
        for tracer, note in zip(_TRACERS, notes):
            if note is not None:
                tracer._wrote(note)
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


def wrapped_caller_is_user() -> bool | None:
    """Inside a wrapped write: did user code call it itself?  None outside one."""
    local = _LOCAL.__dict__
    return local.get("direct", False) if local.get("busy") else None


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
            compiling: Callable[[], bool], grad_enabled: Callable[[], bool]) -> Callable[..., Any]:
    @functools.wraps(original)
    def traced(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        if not _TRACERS or compiling() or getattr(_LOCAL, "busy", False):
            return result
        source = args[0] if args else None
        special = always or (getattr(source, "requires_grad", False)
                             and (multi or not grad_enabled()))
        site = _view_site(sys._getframe(1), special)
        if site is not None:
            for tracer in _TRACERS:
                tracer._made_view(name, source, result, site, args, kwargs)
        return result

    return traced


def _property_viewer(descriptor: Any, name: str, compiling: Callable[[], bool]) -> property:
    def get(self: Any) -> Any:
        result = descriptor.__get__(self)
        if _TRACERS and not compiling() and not getattr(_LOCAL, "busy", False):
            site = _view_site(sys._getframe(1), False)
            if site is not None:
                for tracer in _TRACERS:
                    tracer._made_view(name, self, result, site, (self,), {})
        return result

    def set(self: Any, value: Any) -> None:
        descriptor.__set__(self, value)  # raises as torch does for a read-only attribute

    return property(get, set, doc=getattr(descriptor, "__doc__", None))


# --- what to wrap, from the op tables -------------------------------------------------------


def _places(op: Any, offset: int) -> tuple[tuple[int, str], ...]:
    """Positions of ``op``'s written arguments; ``offset`` 1 for methods (the receiver)."""
    places = []
    for name in op.writes:
        if name in ("self", "input") and offset == 1:
            places.append((0, name))
        elif name in op.params:
            places.append((op.params.index(name) + offset, name))
        else:
            places.append((-1, name))
    return tuple(places)


def _switch_position(function: Any, keyword: str) -> int:
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return -1
    for index, parameter in enumerate(parameters):
        if parameter.name == keyword:
            return index if parameter.kind is parameter.POSITIONAL_OR_KEYWORD else -1
    return -1


def _plan(torch: Any) -> list[tuple[Any, str, str, Any]]:
    """(owner, attribute, role, detail) for everything to wrap; role is "write" or "view"."""
    from aliaslint import ops

    plan: list[tuple[Any, str, str, Any]] = []
    functional = torch.nn.functional
    for qualified in ops.names("ops"):
        owner_name, _, attribute = qualified.rpartition(".")
        op = ops.lookup(qualified)
        if op is None:
            continue
        if owner_name == "torch.Tensor":
            owner, offset = torch.Tensor, 1
        elif owner_name == "torch":
            owner, offset = torch, 0
        elif owner_name == "torch.nn.functional":
            owner, offset = functional, 0
        elif owner_name == "torch.linalg" and op.kind == "view":
            # Only its views (`torch.linalg.diagonal`): its `out=` calls are not wrapped.
            owner, offset = torch.linalg, 0
        else:
            continue
        value = owner.__dict__.get(attribute) if owner is torch.Tensor else None
        if value is None:
            value = getattr(owner, attribute, None)
        if value is None or isinstance(value, type):
            continue
        if op.is_property:
            if op.kind == "view" and owner is torch.Tensor:
                plan.append((owner, attribute, "view-property", op))
            continue
        if not callable(value):
            continue
        if op.kind == "inplace" and op.bumps_version is not False:
            spec = WriteSpec(attribute, _places(op, offset), data=not op.metadata_only)
        elif owner is torch and op.has_out:
            spec = WriteSpec(attribute, (), switch=(-1, "out"))
        elif owner is torch and op.writes:
            spec = WriteSpec(attribute, _places(op, offset))
        elif owner is functional and op.inplace_kwarg:
            # Named as the in-place op it then is (`relu_`).
            spec = WriteSpec(attribute + "_", ((0, op.params[0] if op.params else "input"),),
                             switch=(_switch_position(value, op.inplace_kwarg), op.inplace_kwarg))
        elif op.kind in ("view", "indexing", "sometimes_alias") and owner is not functional:
            plan.append((owner, attribute, "view", op))
            continue
        else:
            continue
        plan.append((owner, attribute, "write", spec))
    return plan


@functools.cache
def _replacements(torch: Any) -> tuple[tuple[Any, str, Any], ...]:
    """(owner, attribute, wrapper) for everything the plan wraps; built once per process."""
    compiling = torch.compiler.is_compiling
    grad_enabled = torch.is_grad_enabled
    tensor_type = torch.Tensor
    made = []
    for owner, attribute, role, detail in _plan(torch):
        current = owner.__dict__.get(attribute) if isinstance(owner, type) else None
        original = getattr(owner, attribute)
        if role == "write":
            replacement: Any = _writer(original, detail, tensor_type, compiling)
        elif role == "view":
            replacement = _viewer(original, attribute, detail.self_overlapping,
                                  detail.multi_output, compiling, grad_enabled)
        else:
            descriptor = inspect.getattr_static(owner, attribute)
            replacement = _property_viewer(descriptor, attribute, compiling)
        if isinstance(current, staticmethod):
            replacement = staticmethod(replacement)
        made.append((owner, attribute, replacement))
    return tuple(made)


def _install(torch: Any) -> None:
    defaults = _defaults(torch)  # read before the functions they hold are replaced
    for owner, attribute, replacement in _replacements(torch):
        _replace(owner, attribute, replacement)
    for function, attribute, value in defaults:
        _replace(function, attribute, value)
    _install_extras(torch)
    _install_builders(torch)


@functools.cache
def _defaults(torch: Any) -> tuple[tuple[Any, str, Any], ...]:
    """(method, ``"__defaults__"`` or ``"__kwdefaults__"``, its value with each wrapped
    function in it replaced by the wrapper) for the methods of torch.nn's classes whose
    defaults hold a function the trace wraps: ``activation=F.relu`` of the
    ``nn.Transformer*`` classes.  A module built with the default then holds the
    ``F.relu`` that the trace has, as it does untraced: ``torch.save`` of the module can
    pickle it (pickle finds a function by name and refuses one that is not what the name
    gives), and ``activation is F.relu`` holds.  Built once per process, before the first
    install."""
    wrapped: dict[int, tuple[Any, Any]] = {}
    for owner, attribute, replacement in _replacements(torch):
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


@functools.cache
def _inplace_modules(torch: Any) -> tuple[tuple[type, ...], tuple[type, ...]]:
    """The torch.nn module classes whose ``__init__`` takes ``inplace`` (``nn.ReLU``,
    ``nn.Dropout``), and the classes that define those ``__init__``s (``_DropoutNd``)."""
    classes: list[type] = []
    owners: dict[type, None] = {}
    for name in dir(torch.nn):
        cls = getattr(torch.nn, name, None)
        if not (isinstance(cls, type) and issubclass(cls, torch.nn.Module)):
            continue
        owner = next(k for k in cls.__mro__ if "__init__" in k.__dict__)
        try:
            parameters = inspect.signature(owner.__dict__["__init__"]).parameters
        except (TypeError, ValueError):
            continue
        if "inplace" in parameters:
            classes.append(cls)
            owners[owner] = None
    return tuple(classes), tuple(owners)


def _builder(original: Callable[..., Any], compiling: Callable[[], bool]) -> Callable[..., Any]:
    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        if _TRACERS and getattr(self, "inplace", False) is True and not compiling():
            # Built by the user's own call (or the user's subclass): not by a library, and
            # not by a subclass of torch's (`nn.ReLU6` calls `Hardtanh.__init__`).
            frame = sys._getframe(1)
            if user_code(frame.f_code):
                sites.built(self, frame_site(frame))

    return __init__


def _install_builders(torch: Any) -> None:
    """Where the user builds an in-place module (``nn.ReLU(inplace=True)``): a finding about
    the write its ``forward`` makes points there.  A cost at construction only."""
    compiling = torch.compiler.is_compiling
    classes, owners = _inplace_modules(torch)
    for owner in owners:
        _replace(owner, "__init__", _builder(owner.__dict__["__init__"], compiling))
    for cls in classes:
        forward = getattr(getattr(cls, "forward", None), "__code__", None)
        if forward is not None:
            sites.INPLACE_FORWARDS.add(forward)


_ABSENT = object()


def _install_extras(torch: Any) -> None:
    """Custom ``autograd.Function``s, NumPy sharing, and saved-tensor hooks of the program."""
    function = torch.autograd.function.Function
    original_apply = function.__dict__["apply"]
    tensor_type = torch.Tensor

    def apply(cls: Any, *args: Any, **kwargs: Any) -> Any:
        if not _TRACERS or torch.compiler.is_compiling():
            return original_apply.__func__(cls, *args, **kwargs)
        from aliaslint.runtime.sites import user_site

        local = _LOCAL.__dict__
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
            for tracer in _TRACERS:
                tracer._function_refused(cls.__name__, site, error, forward)
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
            for tracer in _TRACERS:
                for view in views:
                    tracer._made_view(cls.__name__, None, view, site, (), {})
                for entry in written:
                    tracer._function_wrote_input(cls.__name__, entry.op or "an in-place op",
                                                 entry.site, site)
        return result

    functools.update_wrapper(apply, original_apply.__func__)
    _replace(function, "apply", classmethod(apply))

    context = torch.autograd.function.FunctionCtx
    mark_dirty = context.mark_dirty

    @functools.wraps(mark_dirty)
    def traced_mark_dirty(self: Any, *tensors: Any) -> None:
        inputs = _LOCAL.__dict__.get("forward")
        if inputs:
            for tensor in tensors:
                entry = inputs.get(id(tensor))
                if entry is not None:
                    entry.dirty = True
        mark_dirty(self, *tensors)

    _replace(context, "mark_dirty", traced_mark_dirty)

    from_numpy, numpy = torch.from_numpy, torch.Tensor.numpy

    @functools.wraps(from_numpy)
    def traced_from_numpy(array: Any) -> Any:
        tensor = from_numpy(array)
        if _TRACERS and not torch.compiler.is_compiling():
            from aliaslint.runtime.sites import user_site

            site = user_site()
            for tracer in list(_TRACERS):
                tracer._shared_with_numpy(tensor, array, site, from_numpy=True)
        return tensor

    @functools.wraps(numpy)
    def traced_numpy(self: Any, *args: Any, **kwargs: Any) -> Any:
        array = numpy(self, *args, **kwargs)
        if _TRACERS and not torch.compiler.is_compiling():
            from aliaslint.memory import shares_memory

            if shares_memory(self, array):
                from aliaslint.runtime.sites import user_site

                site = user_site()
                for tracer in list(_TRACERS):
                    tracer._shared_with_numpy(self, array, site, from_numpy=False)
        return array

    _replace(torch, "from_numpy", traced_from_numpy)
    _replace(torch.Tensor, "numpy", traced_numpy)

    autograd = torch._C._autograd
    push = autograd._push_saved_tensors_default_hooks

    @functools.wraps(push)
    def push_nested(pack: Callable[[Any], Any], unpack: Callable[[Any], Any]) -> Any:
        # The program's own saved-tensor hooks (activation checkpointing, save_on_cpu)
        # replace the tracer's inside their block: run them inside the tracer's instead.
        for tracer in reversed(_TRACERS):
            pack, unpack = tracer._nest_hooks(pack, unpack)
        return push(pack, unpack)

    _replace(autograd, "_push_saved_tensors_default_hooks", push_nested)
    _ORIGINAL_PUSH[:] = [push]
    snapshots.install(torch, _replace, _TRACERS)


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


# The push of saved-tensor hooks as torch has it, for the tracer's own hooks.
_ORIGINAL_PUSH: list[Callable[..., Any]] = []


def push_hooks(torch: Any, pack: Callable[[Any], Any], unpack: Callable[[Any], Any]) -> None:
    push = _ORIGINAL_PUSH[0] if _ORIGINAL_PUSH else (
        torch._C._autograd._push_saved_tensors_default_hooks)
    push(pack, unpack)


def _replace(owner: Any, attribute: str, value: Any) -> None:
    previous = owner.__dict__.get(attribute, _ABSENT) if isinstance(owner, type) else getattr(
        owner, attribute)
    _REPLACED.append((owner, attribute, previous))
    # setattr: torch's types do not foresee their functions being replaced at run time.
    setattr(owner, attribute, value)


def _restore() -> None:
    while _REPLACED:
        owner, attribute, previous = _REPLACED.pop()
        if previous is _ABSENT:
            delattr(owner, attribute)
        else:
            setattr(owner, attribute, previous)
    _ORIGINAL_PUSH.clear()
    snapshots.uninstall()


def activate(tracer: Tracer) -> None:
    """Add ``tracer`` to those the wrappers report to; install them for the first one."""
    with _LOCK:
        if not _TRACERS:
            import torch

            _install(torch)
        _TRACERS.append(tracer)


def deactivate(tracer: Tracer) -> None:
    """Remove ``tracer``; remove the wrappers when it was the last one."""
    with _LOCK:
        if tracer in _TRACERS:
            _TRACERS.remove(tracer)
        if not _TRACERS:
            _restore()
