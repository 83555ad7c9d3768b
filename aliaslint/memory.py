"""Do two tensors (or ndarrays) overlap in memory?

torch has no public ``shares_memory``: comparing ``untyped_storage().data_ptr()``
answers "same allocation", not "same bytes" (``a[:2]`` and ``a[2:]`` share a
storage but no element).  Here each operand is described to NumPy by its
address, byte strides and item size, without reading or copying any data,
and NumPy's exact solver (``numpy.shares_memory``) or its bounds test
(``numpy.may_share_memory``) decides.  Works for tensors on any device, since
no memory is dereferenced.
"""

from __future__ import annotations


class _Layout:
    """Exposes a tensor's memory layout through the NumPy array interface."""

    def __init__(self, address: int, shape, strides, itemsize: int):
        self.__array_interface__ = {
            "version": 3,
            "shape": tuple(shape),
            "strides": tuple(strides),
            "typestr": f"|V{itemsize}",
            "data": (address, True),
        }


def _describe(x):
    """(device, numpy view of the layout) or None for an object with no memory."""
    import numpy as np

    if isinstance(x, np.ndarray):
        return "cpu", x
    storage = x.untyped_storage()
    if x.numel() == 0 or storage.data_ptr() == 0:
        return None
    itemsize = x.element_size()
    address = storage.data_ptr() + x.storage_offset() * itemsize
    layout = _Layout(address, x.shape, [s * itemsize for s in x.stride()], itemsize)
    return str(x.device), np.asarray(layout)


def _compare(a, b, exact: bool) -> bool:
    import numpy as np

    first, second = _describe(a), _describe(b)
    if first is None or second is None or first[0] != second[0]:
        return False
    if exact:
        return bool(np.shares_memory(first[1], second[1]))
    return bool(np.may_share_memory(first[1], second[1]))


def shares_memory(a, b) -> bool:
    """True when ``a`` and ``b`` (tensors or ndarrays) have at least one byte in common.

    Exact: ``x[::2]`` and ``x[1::2]`` share a storage and interleave, but no
    element, so this is False for them.
    """
    return _compare(a, b, exact=True)


def may_share_memory(a, b) -> bool:
    """True when the memory ranges spanned by ``a`` and ``b`` overlap (a fast bounds test)."""
    return _compare(a, b, exact=False)
