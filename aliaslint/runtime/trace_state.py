"""What the parts of a tracer share: whether the trace is open, torch, the lock, the watched
lines, and the findings every part reports into.

The tracer (``aliaslint.runtime.tracer``) is split by what it follows: saved tensors, views,
writes, memory shared with NumPy, torch's refusals, the deep mode's ops.  Each part answers
the calls that concern it, but all of them find hazards for one trace: one set of findings,
reported once per place, under one lock.  That common ground is a ``TraceState``; the parts
need each other only where one's question is another's answer.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence, Sized
from dataclasses import replace
from typing import Any

from aliaslint.diagnostics import Diagnostic
from aliaslint.runtime.dispatch import OpEvent
from aliaslint.runtime.evidence import Moment, Named, finding
from aliaslint.runtime.hazards import Hazard
from aliaslint.runtime.hazards import codes as hazard_codes
from aliaslint.runtime.sites import Site

LineCallback = Callable[[OpEvent], None]


class TraceState:
    """One trace's shared state.  ``lock``, ``watches``, ``local`` and ``deep`` are never
    rebound, so a part on a per-call path may keep its own reference to them; ``open``,
    ``torch`` and ``tensor_type`` change when the trace opens and closes, and are read here.
    """

    def __init__(self, deep: bool) -> None:
        self.deep = deep
        # True between the tracer's __enter__ and __exit__: the hooks of a closed trace,
        # still reachable (a thread that outlived it, a saved tensor), do nothing.
        self.open = False
        self.torch: Any = None  # imported when the trace opens
        self.tensor_type: Any = None
        self.lock = threading.RLock()
        # Per thread: `packing` while the tracer itself makes a view (the detached alias of
        # a saved output), which is no view of the program's.
        self.local = threading.local()
        self.watches: dict[tuple[str, int], list[LineCallback]] = {}
        # True while pending state asks the deep mode to look at every op, not just writes.
        self.attentive = False
        # The parts' collections that, while not empty, wait for a read or a settled write.
        self._awaiting: list[Sized] = [self.watches]
        # (hazard, file, start) → the finding, its code given when findings are read.
        self._findings: dict[tuple, Diagnostic] = {}

    def awaits(self, pending: Sized) -> None:
        """``pending`` (a part's collection, changed in place only) makes the deep mode look
        at every op while it is not empty."""
        self._awaiting.append(pending)

    def update_attention(self) -> None:
        self.attentive = any(self._awaiting)

    def report(self, hazard: Hazard, site: Site | None, message: str,
               related: Sequence[tuple[str, Site | None]] = (), views: Sequence[Named] = (),
               events: Sequence[Moment] = ()) -> None:
        """A finding, once per (hazard, place); ``views`` (tensors and what they are to it)
        and ``events`` become its evidence, read only now that it is new."""
        if site is not None and (key := (hazard, site.filename, site.span()[0])) \
                not in self._findings:
            self._findings[key] = finding(site, message, related, views, events)

    def reported(self, hazard: Hazard, site: Site | None) -> bool:
        return site is None or (hazard, site.filename, site.span()[0]) in self._findings

    def findings(self) -> list[Diagnostic]:
        """The findings so far in source order, each with the code of the rule that reports
        its hazard."""
        if not self._findings:
            return []
        codes = hazard_codes()
        found = [replace(finding, code=codes[key[0]]) for key, finding in self._findings.items()]
        return sorted(found, key=lambda d: d.sort_key)

    def snapshot_overwritten(self, site: Site | None, message: str,
                             related: list[tuple[str, Site | None]], views: list[Named],
                             events: list[Moment]) -> None:
        """A snapshot kept by reference was read after its owner wrote it
        (``aliaslint.runtime.snapshots`` finds those for every open trace)."""
        if self.open:
            with self.lock:
                self.report(Hazard.SNAPSHOT_OVERWRITTEN, site, message, related, views, events)
