"""Which elements of a storage a tensor (or the target of ``x[index] = v``) covers.

A write hazard between two tensors over one storage needs two *different* element sets
that intersect: ``x[1:4] += 1`` adds in place through the view and then ``__setitem__``
copies that view onto the very elements it came from, which is no hazard at all.  Sizes,
strides and the storage offset decide it without reading any data: two regions are the
same set when their canonical forms (size-1 dimensions dropped, dimensions ordered by
stride, contiguous neighbours merged) agree; whether different sets intersect is NumPy's
exact solver's answer (``aliaslint.memory``).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from aliaslint.runtime.storages import NO_STORAGE

if TYPE_CHECKING:
    from torch import Tensor

# An address for the storage's first byte when asking NumPy: both regions are of one
# storage, so only their offsets from it matter, and nothing is dereferenced.
_BASE = 1 << 20


@dataclass(frozen=True)
class Region:
    """Elements of one storage, in elements: the first one's offset, sizes and strides."""

    offset: int
    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    itemsize: int

    @classmethod
    def of(cls, tensor: Tensor) -> Region | None:
        try:
            return cls(int(tensor.storage_offset()), tuple(map(int, tensor.shape)),
                       tuple(map(int, tensor.stride())), tensor.element_size())
        except NO_STORAGE:
            return None

    def canonical(self) -> tuple[object, ...]:
        """A form two regions share exactly when (for non-negative strides, the only ones
        torch makes) they cover the same elements in some order."""
        if any(size == 0 for size in self.sizes):
            return ("empty",)
        dims = sorted((abs(stride), size) for size, stride in zip(self.sizes, self.strides)
                      if size != 1)
        merged: list[tuple[int, int]] = []
        for stride, size in dims:
            if merged and merged[-1][0] * merged[-1][1] == stride:
                inner_stride, inner_size = merged[-1]
                merged[-1] = (inner_stride, inner_size * size)
            else:
                merged.append((stride, size))
        return (self.offset, self.itemsize, tuple(merged))

    def same_elements(self, other: Region) -> bool:
        return self.canonical() == other.canonical()

    def intersects(self, other: Region) -> bool:
        """Do the two regions share an element (exact, NumPy's solver)?"""
        import numpy as np

        from aliaslint.memory import _Layout

        def described(region: Region) -> Any:
            size = region.itemsize
            return np.asarray(_Layout(_BASE + region.offset * size, region.sizes,
                                      [s * size for s in region.strides], size))

        if "empty" in (self.canonical()[0], other.canonical()[0]):
            return False
        return bool(np.shares_memory(described(self), described(other)))

    def index(self, key: object) -> Region | None:
        """The region ``tensor[key]`` covers for basic indexing (integers, slices, ``None``,
        ``...``); None for advanced indexing (tensors, lists, booleans), whose elements the
        key's values decide."""
        parts = key if isinstance(key, tuple) else (key,)
        if sum(part is Ellipsis for part in parts) > 1:
            return None
        indexing = [p for p in parts if p is not None and p is not Ellipsis]
        if len(indexing) > len(self.sizes):
            return None
        offset = self.offset
        sizes: list[int] = []
        strides: list[int] = []
        dim = 0
        for part in parts:
            if part is None:
                continue
            if part is Ellipsis:
                skip = len(self.sizes) - len(indexing)
                sizes += self.sizes[dim:dim + skip]
                strides += self.strides[dim:dim + skip]
                dim += skip
                continue
            size, stride = self.sizes[dim], self.strides[dim]
            if isinstance(part, slice):
                if not all(v is None or _integer(v) for v in (part.start, part.stop,
                                                               part.step)):
                    return None
                start, stop, step = part.indices(size)
                count = len(range(start, stop, step))
                offset += start * stride if count else 0
                sizes.append(count)
                strides.append(stride * step)
            elif _integer(part):
                position = operator.index(cast(int, part))
                if position < 0:
                    position += size
                if not 0 <= position < size:
                    return None
                offset += position * stride
            else:
                return None
            dim += 1
        sizes += self.sizes[dim:]
        strides += self.strides[dim:]
        return Region(offset, tuple(sizes), tuple(strides), self.itemsize)


def _integer(value: object) -> bool:
    """A Python or NumPy integer (not a bool, which torch reads as a mask)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    numpy_integer = getattr(type(value), "__module__", "") == "numpy" and \
        hasattr(value, "__index__")
    return numpy_integer
