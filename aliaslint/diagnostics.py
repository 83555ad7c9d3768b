"""The one finding type shared by the static checker and the runtime tracer."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Literal

from aliaslint.evidence import Evidence

if TYPE_CHECKING:
    from aliaslint.runtime.predicates import Predicate

Applicability = Literal["safe", "unsafe", "display-only"]
Confidence = Literal["high", "low"]
# Only runtime findings and confirmed/refuted static findings carry a status.
Status = Literal["confirmed", "refuted", "not-reached", "could-not-evaluate", "runtime"]

# The codes that describe the linter itself rather than a hazard in the checked code.
UNUSED_SUPPRESSION = "AL901"
FILE_NOT_CHECKED = "AL902"
INTERNAL_ERROR = "AL903"
META_CODES = frozenset({UNUSED_SUPPRESSION, FILE_NOT_CHECKED, INTERNAL_ERROR})


def display_path(path: str | os.PathLike[str], cwd: str | os.PathLike[str]) -> str:
    """``path`` as findings show it: relative to ``cwd`` with ``/`` when it lies below ``cwd``
    or at most two levels above, else unchanged."""
    try:
        relative = os.path.relpath(path, cwd)
    except ValueError:  # another drive on Windows
        return os.fspath(path)
    relative_path = PurePath(relative)
    if relative_path.parts[:3] == (os.pardir,) * 3:
        return os.fspath(path)
    return relative_path.as_posix()


@dataclass(frozen=True, order=True)
class Position:
    """A 1-based row and 1-based column, as editors and ruff's JSON count them: rows end
    where CPython ends a line, columns count code points (:mod:`aliaslint.lines`)."""

    row: int
    column: int

    def to_json(self) -> dict[str, int]:
        return {"row": self.row, "column": self.column}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Position:
        return cls(int(data["row"]), int(data["column"]))


@dataclass(frozen=True)
class Related:
    """A secondary location that explains a finding ("saved here", "read here")."""

    message: str
    filename: str
    location: Position
    end_location: Position
    # In a notebook: the cell (counted from 1, every cell counts) the rows are in.
    cell: int | None = None

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {
            "message": self.message,
            "filename": self.filename,
            "location": self.location.to_json(),
            "end_location": self.end_location.to_json(),
        }
        if self.cell is not None:
            data["cell"] = self.cell
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Related:
        return cls(str(data["message"]), str(data["filename"]),
                   Position.from_json(data["location"]), Position.from_json(data["end_location"]),
                   data.get("cell"))


@dataclass(frozen=True)
class Edit:
    content: str
    location: Position
    end_location: Position

    def to_json(self) -> dict[str, object]:
        return {
            "content": self.content,
            "location": self.location.to_json(),
            "end_location": self.end_location.to_json(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Edit:
        return cls(str(data["content"]), Position.from_json(data["location"]),
                   Position.from_json(data["end_location"]))


@dataclass(frozen=True)
class Fix:
    message: str
    applicability: Applicability
    edits: tuple[Edit, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "message": self.message,
            "applicability": self.applicability,
            "edits": [edit.to_json() for edit in self.edits],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Fix:
        return cls(str(data["message"]), data["applicability"],
                   tuple(Edit.from_json(edit) for edit in data["edits"]))


@dataclass(frozen=True)
class Operand:
    """A value a runtime predicate reads from the running frame, as the source names it.

    ``root`` is a plain name or attribute chain (``("self", "proj", "weight")``), or None
    when the operand is not one (a call's result); ``derived`` says what the code builds
    from the root (``.storage()``, ``.data``, ``[...]``), empty for the root itself.
    """

    text: str
    root: tuple[str, ...] | None
    derived: str = ""

    def to_json(self) -> list[object]:
        return [self.text, list(self.root) if self.root is not None else None, self.derived]

    @classmethod
    def from_json(cls, data: list[Any]) -> Operand:
        text, root, derived = data
        return cls(str(text), tuple(map(str, root)) if root is not None else None, str(derived))


@dataclass(frozen=True)
class Witness:
    """What a static finding claims, in terms the tracer can evaluate at run time.

    ``predicate`` is the runtime check (``aliaslint.runtime.predicates``), stored by its
    kind's name;
    ``rows`` are the lines where the hazard's operation runs (the primary span when
    empty); ``operands`` the values it compares, passes or writes; ``comparison`` the
    kind of sharing test (``id``, ``is``, ``data_ptr``); ``target`` the name that holds
    a snapshot, or the attribute chain of a typed storage class.
    """

    predicate: Predicate
    rows: tuple[int, ...] = ()
    operands: tuple[Operand, ...] = ()
    comparison: str = ""
    target: tuple[str, ...] | None = None

    def to_json(self) -> list[object]:
        return [self.predicate.kind.value, list(self.rows), [o.to_json() for o in self.operands],
                self.comparison, list(self.target) if self.target is not None else None]

    @classmethod
    def from_json(cls, data: list[Any]) -> Witness:
        # The runtime half is imported only when a stored finding is read back.
        from aliaslint.runtime.predicates import named

        predicate, rows, operands, comparison, target = data
        return cls(named(str(predicate)), tuple(int(r) for r in rows),
                   tuple(Operand.from_json(o) for o in operands), str(comparison),
                   tuple(map(str, target)) if target is not None else None)


@dataclass(frozen=True)
class Diagnostic:
    """One finding: a primary span, a message, and the spans that explain it."""

    code: str
    message: str
    filename: str
    location: Position
    end_location: Position
    related: tuple[Related, ...] = ()
    fix: Fix | None = None
    confidence: Confidence = "high"
    status: Status | None = None
    # In a notebook: the cell (counted from 1, every cell counts) that ``location``
    # and ``end_location`` count rows in; None for a plain file or the whole notebook.
    cell: int | None = None
    # What the finding claims, for confirmation at run time; never shown to users.
    witness: Witness | None = field(default=None, compare=False)
    # Runtime findings of a job of several processes: the ones that hit it ("rank 0",
    # "rank 1 worker 0"); empty when the program ran as one process.
    processes: tuple[str, ...] = ()
    # Runtime findings: the storages, views, version-counter events and processes the run
    # showed (what the HTML report draws); None for static findings.
    evidence: Evidence | None = field(default=None, compare=False)

    @property
    def sort_key(self) -> tuple:
        return (self.filename, self.cell or 0, self.location, self.code, self.message)

    @property
    def name(self) -> str:
        from aliaslint import registry

        rule = registry.briefs().get(self.code)
        return rule.name if rule else self.code

    @property
    def url(self) -> str:
        from aliaslint.registry import rule_url

        return rule_url(self.code)

    def with_filename(self, filename: str) -> Diagnostic:
        """The same finding with every path (primary and related) rewritten."""
        old = self.filename
        related = tuple(
            replace(r, filename=filename if r.filename == old else r.filename)
            for r in self.related
        )
        evidence = self.evidence.with_filenames(
            lambda name: filename if name == old else name) if self.evidence else None
        return replace(self, filename=filename, related=related, evidence=evidence)

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {
            "code": self.code,
            "name": self.name,
            "message": self.message,
            "filename": self.filename,
            "location": self.location.to_json(),
            "end_location": self.end_location.to_json(),
            "related": [r.to_json() for r in self.related],
            "fix": self.fix.to_json() if self.fix else None,
            "url": self.url,
            "confidence": self.confidence,
        }
        if self.status is not None:
            data["status"] = self.status
        if self.cell is not None:
            data["cell"] = self.cell
        if self.processes:
            data["processes"] = list(self.processes)
        if self.evidence is not None:
            data["evidence"] = self.evidence.to_json()
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Diagnostic:
        """The finding ``to_json`` wrote (its witness is not part of it)."""
        fix, evidence = data.get("fix"), data.get("evidence")
        return cls(
            code=str(data["code"]), message=str(data["message"]),
            filename=str(data["filename"]), location=Position.from_json(data["location"]),
            end_location=Position.from_json(data["end_location"]),
            related=tuple(Related.from_json(r) for r in data.get("related", ())),
            fix=Fix.from_json(fix) if fix else None, confidence=data.get("confidence", "high"),
            status=data.get("status"), cell=data.get("cell"),
            processes=tuple(map(str, data.get("processes", ()))),
            evidence=Evidence.from_json(evidence) if evidence else None,
        )


def distinct(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Sorted, each finding once: a write in a helper that two checked files call is found
    by both analyses, at the same place."""
    diagnostics.sort(key=lambda d: d.sort_key)
    seen: set[tuple] = set()
    kept = []
    for d in diagnostics:
        key = (d.code, d.filename, d.cell, d.location, d.end_location)
        if key not in seen:
            seen.add(key)
            kept.append(d)
    return kept
