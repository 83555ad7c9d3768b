"""The running frame's values, read without running user code, and the memory they share."""

from __future__ import annotations

import inspect
import sys
from types import CodeType, FrameType, ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch import Tensor

# Containers are read this far: a run-time check never walks a huge list.
MAX_ENTRIES = 4096


class Opaque(Exception):
    """The value cannot be read without running user code."""


def lookup(frame: FrameType, chain: tuple[str, ...]) -> object:
    """The value of a name or attribute chain (``self.proj.weight``) in ``frame``."""
    name, *attributes = chain
    local = frame.f_locals
    value: object
    if name in local:
        value = local[name]
    elif name in frame.f_globals:
        value = frame.f_globals[name]
    else:
        builtins = frame.f_builtins
        if name not in builtins:
            raise Opaque(f"`{name}` is not bound")
        value = builtins[name]
    for attribute in attributes:
        value = _static_getattr(value, attribute)
    return value


def _static_getattr(value: object, name: str) -> object:
    """``getattr`` that never runs a user-defined property or ``__getattr__``."""
    if isinstance(value, ModuleType):
        try:
            return getattr(value, name)
        except AttributeError:
            raise Opaque(f"no `{name}`") from None
    torch = sys.modules.get("torch")
    if torch is not None:
        if isinstance(value, torch.nn.Module):
            for table in ("_parameters", "_buffers", "_modules"):
                members = value.__dict__.get(table) or {}
                if name in members:
                    return members[name]
        if isinstance(value, torch.Tensor):
            # Attributes of the tensor type itself are torch's own C getters.
            static = inspect.getattr_static(value, name, None)
            if type(static).__name__ == "getset_descriptor":
                return getattr(value, name)
    try:
        static = inspect.getattr_static(value, name)
    except AttributeError:
        raise Opaque(f"no `{name}`") from None
    if hasattr(type(static), "__get__") and not isinstance(static, (type, ModuleType)):
        raise Opaque(f"`{name}` is computed")
    return static


def describe(value: object) -> str:
    return type(value).__name__


def frame_of(code: CodeType) -> FrameType | None:
    """The innermost frame, above the caller, that runs ``code``."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code is not code:
        frame = frame.f_back
    return frame


def bindings(frame: FrameType | None) -> list[tuple[str, object]]:
    """(name, value) of the frame's locals that hold tensors or ndarrays."""
    if frame is None:
        return []
    import torch

    numpy = sys.modules.get("numpy")
    kinds: tuple[type, ...] = (torch.Tensor, numpy.ndarray) if numpy is not None else (
        torch.Tensor,)
    return [(name, value) for name, value in list(frame.f_locals.items())
            if isinstance(value, kinds)]


def overlaps(a: object, b: object) -> bool:
    """Do ``a`` and ``b`` (tensors or ndarrays) share a byte?  False for anything else."""
    from aliaslint.memory import shares_memory

    try:
        return shares_memory(a, b)
    except (RuntimeError, NotImplementedError, TypeError, ValueError):
        return False


def holds(value: object, tensor: Tensor) -> bool:
    """Is ``value`` the tensor itself, or memory overlapping it?"""
    return value is tensor or overlaps(value, tensor)


def holders(named: list[tuple[str, object]], tensor: Tensor) -> list[str]:
    """Names among ``named`` whose values are ``tensor`` or overlap its memory."""
    return [name for name, value in named if holds(value, tensor)]


def items(container: list | tuple | dict) -> list[tuple[object, object]]:
    """(key, value) pairs of a list, tuple or dict, read without running user code."""
    if isinstance(container, dict):
        return list(dict.items(container))[:MAX_ENTRIES]
    if isinstance(container, list):
        return list(enumerate(list.__getitem__(container, slice(0, MAX_ENTRIES))))
    return list(enumerate(tuple.__getitem__(container, slice(0, MAX_ENTRIES))))


def entries(container: list | tuple | dict, name: str,
            depth: int = 2) -> list[tuple[str, Tensor]]:
    """The tensors of a container and of the lists, tuples and dicts in it (``[[t] * n] * m``),
    each with its place (``sums[2]``, ``counts['cat']``, ``grid[0][1]``)."""
    import torch

    found: list[tuple[str, Tensor]] = []
    for key, value in items(container):
        label = f"{name}[{key!r}]"
        if isinstance(value, torch.Tensor):
            found.append((label, value))
        elif depth > 1 and isinstance(value, (list, tuple, dict)):
            found += entries(value, label, depth - 1)
        if len(found) >= MAX_ENTRIES:
            break
    return found


def same_memory(a: Tensor, b: Tensor) -> bool:
    """Same storage and overlapping bytes."""
    try:
        return (a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
                and overlaps(a, b))
    except (RuntimeError, NotImplementedError, TypeError, ValueError, AttributeError):
        return False
