"""A runtime finding as the tracer makes it: its spans, and the evidence the report draws.

Called only when a finding is new (``TraceState.report``), never per operation, so what it
reads (storage sizes, dtypes, the process's rank and worker) costs the traced program nothing
on its hot path.  Tensors are read for their layout only: no data, no device synchronisation.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any, NamedTuple

from aliaslint.diagnostics import Diagnostic, Related
from aliaslint.evidence import Event, EventKind, Evidence, Process, Storage, View
from aliaslint.runtime.sites import Site
from aliaslint.runtime.storages import NO_STORAGE, storage_of


class Layout(NamedTuple):
    """A tensor's place in memory, taken when it is at hand (the tensor may be gone by the
    time the finding is made)."""

    key: int  # the storage's identity while it lives (``storages.storage_key``)
    nbytes: int
    element_size: int
    dtype: str
    device: str
    offset: int
    sizes: tuple[int, ...]
    strides: tuple[int, ...]


def layout(tensor: Any) -> Layout | None:
    """``tensor``'s layout, or None for a tensor without a plain storage."""
    try:
        storage = storage_of(tensor)
        if storage is None:
            return None
        return Layout(id(storage), storage.nbytes(), tensor.element_size(),
                      str(tensor.dtype).removeprefix("torch."), str(tensor.device),
                      tensor.storage_offset(), tuple(tensor.shape), tuple(tensor.stride()))
    except NO_STORAGE:
        return None


# A tensor (or its layout taken earlier) and what it is to the finding.
Named = tuple[str, Any]
# What happened, where, the version counter after it, and the operation.
Moment = tuple[EventKind, Site | None, int | None, str]


def finding(site: Site, message: str, related: Sequence[tuple[str, Site | None]] = (),
            views: Sequence[Named] = (), events: Sequence[Moment] = ()) -> Diagnostic:
    """The runtime finding at ``site``, with its related spans and its evidence."""
    start, end = site.span()
    spans = []
    for label, where in related:
        if where is None:
            continue
        where_start, where_end = where.span()
        spans.append(Related(message=label, filename=where.filename,
                             location=where_start, end_location=where_end))
    return Diagnostic(code="", message=message, filename=site.filename, location=start,
                      end_location=end, related=tuple(spans), status="runtime",
                      evidence=evidence(views, events))


def evidence(views: Sequence[Named], events: Sequence[Moment]) -> Evidence:
    storages: dict[int, Storage] = {}
    drawn: dict[tuple, View] = {}
    for name, value in views:
        where = value if isinstance(value, Layout) or value is None else layout(value)
        if where is None:
            continue
        storage = storages.get(where.key)
        if storage is None:
            storage = storages[where.key] = Storage(len(storages), where.nbytes,
                                                    where.element_size, where.dtype, where.device)
        # One layout seen in two roles (the saved tensor is the one written) is one view.
        key = (storage.id, where.offset, where.sizes, where.strides, where.element_size)
        known = drawn.get(key)
        drawn[key] = View(storage.id, f"{known.name}; {name}" if known else name, where.offset,
                          where.sizes, where.strides, where.element_size)
    moments = tuple(Event(kind, where.filename, where.line, version, what)
                    for kind, where, version, what in events if where is not None)
    return Evidence(tuple(storages.values()), tuple(drawn.values()), moments, (this_process(),))


def this_process() -> Process:
    """This process: its pid, its rank (torchrun sets ``RANK``), its DataLoader worker id."""
    rank = os.environ.get("RANK") if os.environ.get("WORLD_SIZE") is not None else None
    worker = None
    data = sys.modules.get("torch.utils.data")
    if data is not None:
        try:
            info = data.get_worker_info()
            worker = info.id if info is not None else None
        except Exception:  # a torch without it, or one that refuses outside a worker
            worker = None
    return Process(os.getpid(), int(rank) if rank and rank.isdigit() else None, worker)


def made_then(made: tuple[Site | None, str] | None, kind: EventKind, site: Site | None,
              op: str) -> list[Moment]:
    """Where the view was made (``Views.view_site``'s answer, when known), then ``kind``."""
    moments: list[Moment] = [("view", made[0], None, made[1])] if made else []
    return [*moments, (kind, site, None, op)]
