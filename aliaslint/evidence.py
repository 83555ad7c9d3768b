"""What the run showed about a runtime finding, as plain data a report can draw.

The tracer knows more at the moment it makes a finding than a message can say: the storages
involved (their size in bytes, dtype, device), the tensors over them (offset, sizes and strides
in elements), the version counter's history (saved at version v on one line, written on
another, read by backward on a third), and the process it ran in.  ``Evidence`` keeps those
facts, gathered only when a finding is made (``aliaslint.runtime.evidence``), and travels with
the ``Diagnostic`` through the JSON records of the job's processes to the HTML report
(``aliaslint.html_report``).  No torch here: plain numbers and strings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

# The version counter's events, in the order they happen; "view" and "shared" are the other
# moments a finding explains (where the view was made, where NumPy got the memory).
EventKind = Literal["saved", "written", "read", "view", "shared"]
EVENT_KINDS: tuple[EventKind, ...] = ("saved", "written", "read", "view", "shared")


@dataclass(frozen=True)
class Storage:
    """One allocation: ``nbytes`` bytes of ``dtype`` elements (``element_size`` bytes each)."""

    id: int  # counted from 0 within one finding
    nbytes: int
    element_size: int
    dtype: str
    device: str

    def to_json(self) -> dict[str, object]:
        return {"id": self.id, "nbytes": self.nbytes, "element_size": self.element_size,
                "dtype": self.dtype, "device": self.device}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Storage:
        return cls(int(data["id"]), int(data["nbytes"]), int(data["element_size"]),
                   str(data["dtype"]), str(data["device"]))


@dataclass(frozen=True)
class View:
    """A tensor over a storage: where its elements lie, counted in elements as torch counts
    them.  ``name`` says what the tensor is to the finding ("saved by `Sigmoid`")."""

    storage: int  # a ``Storage.id``
    name: str
    offset: int
    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    element_size: int

    @property
    def byte_extent(self) -> tuple[int, int]:
        """The first byte and one past the last byte its elements cover (an empty tensor
        covers none: both are its offset)."""
        first = self.offset * self.element_size
        if any(size == 0 for size in self.sizes):
            return first, first
        low = self.offset + sum((size - 1) * stride for size, stride
                                in zip(self.sizes, self.strides) if stride < 0)
        high = self.offset + sum((size - 1) * stride for size, stride
                                 in zip(self.sizes, self.strides) if stride > 0)
        return low * self.element_size, (high + 1) * self.element_size

    def to_json(self) -> dict[str, object]:
        return {"storage": self.storage, "name": self.name, "offset": self.offset,
                "sizes": list(self.sizes), "strides": list(self.strides),
                "element_size": self.element_size}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> View:
        return cls(int(data["storage"]), str(data["name"]), int(data["offset"]),
                   tuple(map(int, data["sizes"])), tuple(map(int, data["strides"])),
                   int(data["element_size"]))


@dataclass(frozen=True)
class Event:
    """A moment of the finding's history: what happened (``kind``), where, and the version
    of the tensor's counter after it (None when not known or not counted)."""

    kind: EventKind
    filename: str
    line: int
    version: int | None = None
    what: str = ""  # the operation, when known (`relu_`, `Sigmoid`)

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "filename": self.filename, "line": self.line,
                "version": self.version, "what": self.what}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Event:
        kind = str(data["kind"])
        if kind not in EVENT_KINDS:
            raise ValueError(f"unknown event kind {kind!r}")
        version = data.get("version")
        return cls(kind, str(data["filename"]), int(data["line"]),  # type: ignore[arg-type]
                   None if version is None else int(version), str(data.get("what", "")))


@dataclass(frozen=True)
class Process:
    """The process the finding was made in: its pid, its rank under torchrun, its
    DataLoader worker id."""

    pid: int
    rank: int | None = None
    worker: int | None = None

    def describe(self) -> str:
        parts = ([f"rank {self.rank}"] if self.rank is not None else []) + (
            [f"worker {self.worker}"] if self.worker is not None else [])
        return " ".join(parts + [f"pid {self.pid}"])

    def to_json(self) -> dict[str, object]:
        return {"pid": self.pid, "rank": self.rank, "worker": self.worker}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Process:
        rank, worker = data.get("rank"), data.get("worker")
        return cls(int(data["pid"]), None if rank is None else int(rank),
                   None if worker is None else int(worker))


@dataclass(frozen=True)
class Evidence:
    storages: tuple[Storage, ...] = ()
    views: tuple[View, ...] = ()
    events: tuple[Event, ...] = ()
    processes: tuple[Process, ...] = ()

    def with_filenames(self, rename: Callable[[str], str]) -> Evidence:
        """The same evidence with each event's file name passed through ``rename``."""
        return replace(self, events=tuple(replace(e, filename=rename(e.filename))
                                          for e in self.events))

    def to_json(self) -> dict[str, object]:
        return {"storages": [s.to_json() for s in self.storages],
                "views": [v.to_json() for v in self.views],
                "events": [e.to_json() for e in self.events],
                "processes": [p.to_json() for p in self.processes]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Evidence:
        return cls(tuple(Storage.from_json(s) for s in data.get("storages", ())),
                   tuple(View.from_json(v) for v in data.get("views", ())),
                   tuple(Event.from_json(e) for e in data.get("events", ())),
                   tuple(Process.from_json(p) for p in data.get("processes", ())))
