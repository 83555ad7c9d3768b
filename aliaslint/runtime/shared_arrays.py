"""Memory the traced program shares with NumPy arrays: which storages, and the two hazards of
it (AL301).

NumPy writes never pass through torch, so they are found from the torch side: a read of
shared bytes that changed while no version counter moved is a write NumPy made
(``aliaslint.runtime.numpy_share`` fingerprints the bytes); a torch write to memory an array
the user still holds shares changes that array too.  Kept apart from the other parts because
it alone reads tensor data, and costs nothing while no memory is shared.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from aliaslint.runtime.hazards import Hazard
from aliaslint.runtime.numpy_share import NumpyShare
from aliaslint.runtime.sites import LazySite, Site
from aliaslint.runtime.storages import storage_of
from aliaslint.runtime.trace_state import TraceState


class SharedArrays:
    """The storages shared with NumPy arrays while a trace is open."""

    def __init__(self, shared: TraceState) -> None:
        self._shared = shared
        # Storage key → the sharing; an entry lives as long as its storage.
        self.shares: dict[int, NumpyShare] = {}
        shared.awaits(self.shares)

    def shared_with_numpy(self, tensor: Any, array: Any, site: Site | None,
                          from_numpy: bool) -> None:
        if not self._shared.open:
            return
        storage = storage_of(tensor)
        if storage is None:
            return
        key = id(storage)
        with self._shared.lock:
            share = self.shares.get(key)
            if share is not None and share.array() is array:
                if from_numpy and share.torch_refs:
                    share.torch_refs += 1
                share.add_tensor(tensor)
                return
            self.shares[key] = NumpyShare(array, tensor, site, from_numpy)
            # The entry lives as long as the storage: its key is valid that long.
            weakref.finalize(storage, self.shares.pop, key, None)
            self._shared.update_attention()

    def read(self, tensor: Any, site: Callable[[], Site | None], op: str) -> None:
        """Torch reads ``tensor``: bytes the NumPy side changed since torch last saw them?"""
        storage = storage_of(tensor)
        share = self.shares.get(id(storage)) if storage is not None else None
        if share is None or not share.changed_by_numpy(tensor):
            return
        what = f"`{op}`" if op else "this operation"
        self._shared.report(
            Hazard.NUMPY_SHARED, site(),
            f"{what} reads memory a NumPy array shares, which was written from the NumPy side "
            "since torch last saw it (no torch write moved its version counter): the tensor "
            "changed with the array", [("shared with NumPy here", share.site)],
            [(f"read by {what}", tensor)],
            [("shared", share.site, None, "NumPy"), ("read", site(), None, op)])

    def torch_wrote(self, op: str, share: NumpyShare, site: LazySite, tensor: Any) -> None:
        """Torch is about to write memory ``share`` covers: the array changes too, if the
        user still holds it."""
        if share.user_holds_array() and not self._shared.reported(Hazard.NUMPY_SHARED, site()):
            self._shared.report(
                Hazard.NUMPY_SHARED, site(),
                f"in-place `{op}` writes memory shared with a NumPy array that is still alive; "
                "the array changes too", [("shared with NumPy here", share.site)],
                [(f"written by `{op}`", tensor)],
                [("shared", share.site, None, "NumPy"), ("written", site(), None, op)])
