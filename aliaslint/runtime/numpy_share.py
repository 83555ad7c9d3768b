"""Memory a tensor shares with a NumPy array, and writes made to it from the NumPy side.

NumPy writes (``array[...] = v``, ``array += 1``, ``np.copyto``) never pass through torch:
no hook sees them and no version counter moves.  So when the sharing starts the shared
bytes are fingerprinted, block by block (a CRC-32 per 64 KiB), together with the version
counters of the tensors over them.  Where the tracer next sees the tensor side read (saved
for backward, written, unpacked by a backward pass), the blocks that read covers are hashed
again: different bytes while no torch write moved a version counter mean the NumPy side
wrote them.  A torch write (a version that moved) takes a new fingerprint instead.

Only the bytes of a read are hashed again, so a read of a small slice of a large shared
buffer costs the slice.  Reading the bytes needs the memory alive: it is read only while
the array is, and the array keeps it alive (a ``from_numpy`` tensor's storage holds its
array; an array made by ``Tensor.numpy()`` holds its tensor).
"""

from __future__ import annotations

import ctypes
import sys
import weakref
import zlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from torch import Tensor

    from aliaslint.runtime.sites import Site

BLOCK = 1 << 16


def _extent(address: int, shape: tuple[int, ...], strides: tuple[int, ...],
            itemsize: int) -> tuple[int, int]:
    """[low, high) of the bytes an array of this layout touches (strides in bytes)."""
    if any(size == 0 for size in shape):
        return address, address
    low = high = address
    for size, stride in zip(shape, strides):
        if stride < 0:
            low += (size - 1) * stride
        else:
            high += (size - 1) * stride
    return low, high + itemsize


def array_extent(array: Any) -> tuple[int, int]:
    interface = array.__array_interface__
    return _extent(interface["data"][0], array.shape, array.strides, array.itemsize)


def tensor_extent(tensor: Tensor) -> tuple[int, int]:
    itemsize = tensor.element_size()
    return _extent(tensor.data_ptr(), tuple(tensor.shape),
                   tuple(s * itemsize for s in tensor.stride()), itemsize)


class NumpyShare:
    """One NumPy array and the tensors torch made over its memory (or it over theirs)."""

    def __init__(self, array: Any, tensor: Tensor, site: Site | None,
                 from_numpy: bool) -> None:
        self.array = weakref.ref(array)
        self.site = site
        # References torch's own storages hold on the array (one per torch.from_numpy call);
        # None for arrays made by Tensor.numpy(), which torch does not hold.
        self.torch_refs: int | None = 1 if from_numpy else None
        self.tensors: list[weakref.ref[Tensor]] = [weakref.ref(tensor)]
        self.start, self.end = array_extent(array)
        self.versions = self._versions()
        self.blocks = self._hash(self.start, self.end)

    def add_tensor(self, tensor: Tensor) -> None:
        self.tensors.append(weakref.ref(tensor))
        self.versions = self._versions()

    def user_holds_array(self) -> bool:
        """Does anything besides torch still hold the array (or an array over it)?"""
        array = self.array()
        if array is None:
            return False
        if self.torch_refs is None:
            return True
        # getrefcount's argument and the local name, then torch's storages.
        if sys.getrefcount(array) - 2 - self.torch_refs > 0:
            return True
        base = getattr(array, "base", None)
        while base is not None and hasattr(base, "__array_interface__"):
            # The argument, the local name and the child's ``.base``.
            if sys.getrefcount(base) - 3 > 0:
                return True
            base = getattr(base, "base", None)
        return False

    def _versions(self) -> tuple[int, ...]:
        versions = []
        for ref in self.tensors:
            tensor = ref()
            if tensor is not None:
                try:
                    versions.append(tensor._version)
                except RuntimeError:  # inference tensors have no version counter
                    versions.append(-1)
        return tuple(versions)

    def _hash(self, start: int, end: int) -> dict[int, int]:
        """CRC-32 of each block that [start, end) touches, by block number."""
        first, last = (start - self.start) // BLOCK, (end - self.start - 1) // BLOCK
        hashes: dict[int, int] = {}
        for block in range(max(first, 0), last + 1):
            low = self.start + block * BLOCK
            high = min(low + BLOCK, self.end)
            if high > low:
                hashes[block] = zlib.crc32((ctypes.c_char * (high - low)).from_address(low))
        return hashes

    def refresh(self) -> None:
        """Torch wrote: the current bytes are torch's, not a NumPy-side write."""
        if self.array() is None:
            return
        self.versions = self._versions()
        self.blocks = self._hash(self.start, self.end)

    def changed_by_numpy(self, tensor: Tensor) -> bool:
        """Did bytes ``tensor`` covers change since torch last saw them, with no torch write
        in between?  (False once the array is gone: then nothing NumPy holds can write.)"""
        if self.array() is None:
            return False
        versions = self._versions()
        if versions != self.versions:
            self.refresh()
            return False
        start, end = tensor_extent(tensor)
        start, end = max(start, self.start), min(end, self.end)
        if end <= start:
            return False
        now = self._hash(start, end)
        changed = any(self.blocks.get(block) != value for block, value in now.items())
        self.blocks.update(now)
        return changed
