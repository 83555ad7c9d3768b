"""What one dispatched ATen op is: its schema's writes and views, its tensors, its user site."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aliaslint.runtime.sites import Site, user_site

if TYPE_CHECKING:
    from torch import Tensor


@dataclass(frozen=True)
class OpFacts:
    name: str
    # (position, name, keyword-only) of every argument the schema marks as written.
    writes: tuple[tuple[int, str, bool], ...]
    makes_view: bool


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
    return OpFacts(op.overloadpacket.__name__, writes, makes_view)


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
    """One ATen operation that ran at a watched line (see ``Tracer.watch``)."""

    op: Any  # torch._ops.OpOverload
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    result: Any
    site: Site


class OpSite:
    """The user site of the running op, found only if some check needs it."""

    __slots__ = ("known", "site")

    def __init__(self) -> None:
        self.known = False
        self.site: Site | None = None

    def __call__(self) -> Site | None:
        if not self.known:
            self.site, self.known = user_site(), True
        return self.site


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
        if self._by_storage is None:
            self._by_storage = {}
            for tensor in self.tensors:
                try:
                    key = tensor.untyped_storage().data_ptr()
                except (RuntimeError, NotImplementedError, TypeError):
                    continue
                self._by_storage.setdefault(key, []).append(tensor)
        return self._by_storage.get(storage, [])


def layout_of(tensor: Tensor) -> tuple[object, ...]:
    """Where a tensor's elements lie: storage, offset, shape, strides."""
    return (tensor.untyped_storage().data_ptr(), tensor.storage_offset(),
            tuple(tensor.shape), tensor.stride())
