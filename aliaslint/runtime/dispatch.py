"""What one dispatched ATen op is (its schema's writes and views, its tensors), and the
``--deep`` tracer's dispatch mode that sees every op."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aliaslint.runtime.sites import Site
from aliaslint.runtime.storages import storage_key

if TYPE_CHECKING:
    from torch import Tensor
    from torch.utils._python_dispatch import TorchDispatchMode


@dataclass(frozen=True)
class OpFacts:
    name: str
    # (position, name, keyword-only) of every argument the schema marks as written.
    writes: tuple[tuple[int, str, bool], ...]
    makes_view: bool
    # False for writes of sizes, strides or the storage only (torchgen's `inplace_view` tag:
    # `set_`, `t_`, `as_strided_`): no element is written.
    data: bool = True


def learn(op: Any) -> OpFacts | None:
    """What the schema of ``op`` (a ``torch._ops.OpOverload``) says; None for an op that
    neither writes nor makes a view."""
    schema = op._schema
    writes = tuple(
        (index, argument.name, argument.kwarg_only)
        for index, argument in enumerate(schema.arguments)
        if argument.alias_info is not None and argument.alias_info.is_write
    )
    makes_view = any(
        ret.alias_info is not None and not ret.alias_info.is_write for ret in schema.returns
    )
    if not writes and not makes_view:
        return None
    metadata_only = any(tag.name == "inplace_view" for tag in getattr(op, "tags", ()))
    return OpFacts(op.overloadpacket.__name__, writes, makes_view, not metadata_only)


def tensors_in(values: Iterable[object], tensor_type: type[Tensor]) -> Iterator[Tensor]:
    """The tensors among ``values`` and in the lists and tuples among them."""
    for value in values:
        if isinstance(value, tensor_type):
            yield value
        elif isinstance(value, (list, tuple)):
            for item in value:
                if isinstance(item, tensor_type):
                    yield item


def written(facts: OpFacts | None, args: tuple[Any, ...], kwargs: Mapping[str, Any],
            tensor_type: type[Tensor]) -> list[Tensor]:
    """The tensors the op's schema marks as written (``Tensor(a!)``)."""
    found: list[Tensor] = []
    for index, name, keyword_only in facts.writes if facts is not None else ():
        if keyword_only or index >= len(args):
            value = kwargs.get(name)
        else:
            value = args[index]
        found += tensors_in((value,), tensor_type)
    return found


@dataclass(frozen=True)
class OpEvent:
    """One operation that ran at a watched line (see ``Tracer.watch``): a call that wrote
    or made a view (the default tracer), or any ATen op (``--deep``)."""

    name: str  # `add_`, `view`, `__setitem__`; with --deep the ATen op's name (`add_`)
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    result: Any
    site: Site
    written: tuple[Any, ...] = ()  # the tensors it wrote
    op: Any = None  # with --deep, the torch._ops.OpOverload


class OpInputs:
    """The tensors an op reads besides those it writes; grouped by storage only on demand."""

    __slots__ = ("_any_view", "_by_storage", "tensors")

    def __init__(self, tensors: list[Tensor]) -> None:
        self.tensors = tensors
        self._by_storage: dict[int, list[Tensor]] | None = None
        self._any_view: bool | None = None

    def any_view(self) -> bool:
        if self._any_view is None:
            self._any_view = any(t._is_view() for t in self.tensors)
        return self._any_view

    def on_storage(self, storage: int) -> list[Tensor]:
        """The inputs over the storage whose key (``storages.storage_key``) is ``storage``."""
        if self._by_storage is None:
            self._by_storage = {}
            for tensor in self.tensors:
                key = storage_key(tensor)
                if key is not None:
                    self._by_storage.setdefault(key, []).append(tensor)
        return self._by_storage.get(storage, [])




@functools.cache
def mode_type() -> Callable[[Any], TorchDispatchMode]:
    """The ``--deep`` tracer's dispatch mode: hands writes and views (and, while the tracer
    waits for a read, every op) to ``observer.observe`` (``aliaslint.runtime.deep``); every
    other op passes through."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class AliasMode(TorchDispatchMode):
        def __init__(self, observer: Any) -> None:
            super().__init__()
            self.facts = observer.facts
            self.shared = observer.shared
            self.observe = observer.observe

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if kwargs is None:
                kwargs = {}
            try:
                facts = self.facts[func]
            except KeyError:
                facts = self.facts[func] = learn(func)
            if facts is None and not self.shared.attentive:
                return func(*args, **kwargs)
            return self.observe(func, facts, args, kwargs)

    return AliasMode
