"""Which elements of a storage a tensor (or the target of ``x[index] = v``) covers.

A write hazard between two tensors over one storage needs two *different* element sets
that intersect: ``x[1:4] += 1`` adds in place through the view and then ``__setitem__``
copies that view onto the very elements it came from, which is no hazard at all.  Sizes,
strides and the storage offset decide it without reading any data: two regions are the
same set when their canonical forms (size-1 dimensions dropped, dimensions ordered by
stride, contiguous neighbours merged) agree.

Whether different sets intersect is answered exactly when that is cheap, and by a sample
otherwise (``Region.overlap``):

* exact, by NumPy's solver (``numpy.shares_memory``, as ``aliaslint.memory``), when the two
  canonical forms have at most ``EXACT_DIMS`` dimensions together (two 2-D strided regions;
  a contiguous tensor is one dimension);
* exact, by listing the elements of both, when they hold at most ``EXACT_ELEMENTS`` together;
* else sampled: ``SAMPLES`` elements of the written region, the same ones on every run, each
  checked exactly against the other region.  A sampled "yes" is a real shared element; a
  sampled "no" may miss one, and the answer says how many elements the sample checked.
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

# Solved exactly when the two canonical forms have this many dimensions together, at most.
EXACT_DIMS = 4
# Otherwise listed exactly when the two regions hold this many elements together, at most.
EXACT_ELEMENTS = 1 << 15
# Otherwise this many elements of the first region are checked against the second.
SAMPLES = 256
# The solver's budget for one sampled element (a single element against a region).
_SAMPLE_WORK = 1 << 12


@dataclass(frozen=True)
class Overlap:
    """Whether two regions share an element; ``sampled`` > 0 when a sample of ``of``
    elements of the first region decided it (otherwise the answer is exact)."""

    found: bool
    sampled: int = 0
    of: int = 0

    def __bool__(self) -> bool:
        return self.found

    def note(self) -> str:
        """What a finding says about how the overlap was established ("" when exact)."""
        if not self.sampled:
            return ""
        return f" (overlap found by sampling {self.sampled} of {self.of} elements)"


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
        """Do the two regions share an element?  (``overlap``, as a bool.)"""
        return self.overlap(other).found

    def overlap(self, other: Region) -> Overlap:
        """Do the two regions share a byte?  Exact for small problems (see the module's
        docstring); beyond them a deterministic sample of this region's elements is
        checked against ``other``, and the answer says so."""
        mine, theirs = self.canonical(), other.canonical()
        if mine[0] == "empty" or theirs[0] == "empty":
            return Overlap(False)
        low, high = self._bounds()
        other_low, other_high = other._bounds()
        if high <= other_low or other_high <= low:
            return Overlap(False)
        dims, other_dims = cast(tuple, mine[2]), cast(tuple, theirs[2])
        if len(dims) + len(other_dims) <= EXACT_DIMS:
            import numpy as np

            return Overlap(bool(np.shares_memory(self._layout(), other._layout())))
        count, other_count = _count(dims), _count(other_dims)
        if count + other_count <= EXACT_ELEMENTS:
            return Overlap(_listed_overlap(self._starts(), self.itemsize, other._starts(),
                                           other.itemsize))
        return self._sampled_overlap(other, count)

    def _bounds(self) -> tuple[int, int]:
        """The first byte and one past the last that the (non-empty) region spans."""
        size = self.itemsize
        last = sum((n - 1) * abs(s) for n, s in zip(self.sizes, self.strides))
        return self.offset * size, (self.offset + last) * size + size

    def _merged(self) -> tuple[tuple[int, int], ...]:
        return cast(tuple, self.canonical()[2])

    def _layout(self, offset: int | None = None) -> Any:
        """The canonical form described to NumPy (one element at ``offset`` when given)."""
        import numpy as np

        from aliaslint.memory import _Layout

        size = self.itemsize
        if offset is not None:
            return np.asarray(_Layout(_BASE + offset, (), (), size))
        dims = self._merged()
        return np.asarray(_Layout(_BASE + self.offset * size, [n for _, n in dims],
                                  [s * size for s, _ in dims], size))

    def _starts(self, picks: Any = None) -> Any:
        """Byte offsets of the region's elements (of the flat positions ``picks`` only,
        when given), as a NumPy array."""
        import numpy as np

        dims = self._merged()
        size = self.itemsize
        if picks is None:
            starts = np.zeros(1, dtype=np.int64)
            for stride, count in dims:
                starts = (starts[:, None] + np.arange(count, dtype=np.int64) * stride).ravel()
        else:
            starts = np.zeros(len(picks), dtype=np.int64)
            rest = np.asarray(picks, dtype=np.int64)
            for stride, count in dims:
                rest, place = np.divmod(rest, count)
                starts += place * stride
        return (starts + self.offset) * size

    def _sampled_overlap(self, other: Region, count: int) -> Overlap:
        """``SAMPLES`` of this region's elements (the first, the last and a seeded random
        choice of the others: the same on every run), each checked exactly against
        ``other``; all of them, and the answer exact, when there are no more."""
        import numpy as np
        from numpy.exceptions import TooHardError

        if count <= SAMPLES:
            picks = np.arange(count)
        else:
            inner = np.random.default_rng(0).choice(count - 2, SAMPLES - 2, replace=False)
            picks = np.concatenate(([0, count - 1], inner + 1))
        sampled = 0 if count <= SAMPLES else len(picks)
        theirs = other._layout()
        # NumPy's stubs allow only -1 and 0 for `max_work`; it takes any budget.
        solve: Any = np.shares_memory
        for start in self._starts(picks).tolist():
            try:
                if solve(self._layout(start), theirs, max_work=_SAMPLE_WORK):
                    return Overlap(True, sampled, count)
            except TooHardError:  # not decided within the budget: not claimed
                sampled = sampled or count
        return Overlap(False, sampled, count)

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


def _count(dims: tuple[tuple[int, int], ...]) -> int:
    count = 1
    for _, size in dims:
        count *= size
    return count


def _listed_overlap(starts: Any, itemsize: int, other_starts: Any, other_itemsize: int) -> bool:
    """Does an element starting at one of ``starts`` share a byte with one starting at one of
    ``other_starts``?  (Elements of ``itemsize`` and ``other_itemsize`` bytes.)"""
    import numpy as np

    theirs = np.sort(other_starts)
    # The first of their elements that ends after each of ours begins ...
    first = np.searchsorted(theirs, starts - other_itemsize, side="right")
    inside = first < len(theirs)
    # ... must begin before ours ends.
    return bool(np.any(theirs[first[inside]] < starts[inside] + itemsize))


def _integer(value: object) -> bool:
    """A Python or NumPy integer (not a bool, which torch reads as a mask)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    numpy_integer = getattr(type(value), "__module__", "") == "numpy" and \
        hasattr(value, "__index__")
    return numpy_integer
