"""What the patches wrap (``aliaslint.runtime.patches``), read from the generated op tables
(``aliaslint.ops``) and torch itself: the wrappers only wrap, and which calls they wrap, with
where each writing call's written arguments are, is decided here.

Nothing here changes torch; a plan is worked out the first time a trace opens in a process.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

from aliaslint.runtime.observer import WriteSpec


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


def plan(torch: Any) -> list[tuple[Any, str, str, Any]]:
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
def inplace_modules(torch: Any) -> tuple[tuple[type, ...], tuple[type, ...]]:
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
