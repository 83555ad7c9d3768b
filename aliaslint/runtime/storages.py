"""Which allocation a tensor's elements live in, and where in it, on any device.

An address alone does not name an allocation for long: allocators (CUDA's caching
allocator above all) hand a freed block's address to the next tensor.  torch keeps one
Python ``UntypedStorage`` object per live storage (``t.untyped_storage()`` returns the same
object for every tensor over it, for as long as the storage lives), so that object is the
identity: its ``id`` is a key while it lives, and a weak reference to it says whether it
still does.  Nothing here reads tensor data or synchronises a device: pointers, offsets,
sizes and strides only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from torch import Tensor

# Tensors without a plain storage (sparse, nested, some subclasses) raise one of these.
NO_STORAGE = (RuntimeError, NotImplementedError, TypeError, ValueError, AttributeError)


def storage_of(tensor: Tensor) -> Any | None:
    """The tensor's ``UntypedStorage`` object, or None when it has no plain storage."""
    try:
        storage = tensor.untyped_storage()
        if storage.data_ptr() == 0 and storage.nbytes() == 0:
            return None
        return storage
    except NO_STORAGE:
        return None


def storage_key(tensor: Tensor) -> int | None:
    """A key for the tensor's storage, valid while the storage lives (its object's id)."""
    storage = storage_of(tensor)
    return None if storage is None else id(storage)


def layout_of(tensor: Tensor) -> tuple[object, ...] | None:
    """Where a tensor's elements lie: its storage's key, offset, sizes and strides."""
    key = storage_key(tensor)
    if key is None:
        return None
    return (key, tensor.storage_offset(), tuple(tensor.shape), tensor.stride())
