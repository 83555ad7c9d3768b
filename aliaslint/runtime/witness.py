"""A static finding under test at run time, and what the run has shown about it."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from typing import TYPE_CHECKING

from aliaslint.diagnostics import Diagnostic, Operand, Status
from aliaslint.evidence import Evidence

if TYPE_CHECKING:
    from aliaslint.runtime.predicates import Predicate


@dataclass
class Witness:
    """A static finding and what the run has shown about it so far."""

    diagnostic: Diagnostic
    path: str  # absolute, as the running code objects name the file
    rows: frozenset[int]
    predicate: Predicate  # what tests it
    operands: tuple[Operand, ...] = ()
    comparison: str = ""  # "id", "is", "data_ptr" for AL401/402/403
    # AL207: the name the snapshot is assigned to; AL404: the typed storage class's chain.
    target: tuple[str, ...] | None = None
    related_rows: frozenset[int] = frozenset()  # related rows in the same file
    primary_rows: frozenset[int] = frozenset()  # the rows the finding points at
    ran: bool = False
    confirmed: bool = False
    evidence: str = ""
    negative: str = ""
    # Why the run could not test the claim (a check that failed): neither proof nor refutal.
    failure: str = ""
    # For a hazard completed by a later backward pass: how many saved tensors backward
    # passes had read when a row first ran (None: no row ran yet).
    backward_mark: int | None = None
    # Why the finding counts as not reached although a row ran.
    unreached: str = ""
    # 2: the hazard itself was seen (a wrong answer, the tracer's finding); 1: the premise
    # held (the operands are tensors) but the answer happened to be right on that run.
    strength: int = 0
    # What the tracer's own finding showed, when one confirmed this one (for the HTML report).
    seen: Evidence | None = None

    def confirm(self, evidence: str, strength: int = 2) -> None:
        if strength > self.strength:
            self.confirmed, self.evidence, self.strength = True, evidence, strength

    def deny(self, reason: str) -> None:
        if not self.negative:
            self.negative = reason

    def fail(self, error: BaseException) -> None:
        self.cannot(f"{type(error).__name__}: {error}"[:300])

    def cannot(self, reason: str) -> None:
        """The run could not test the claim (an operand it cannot read): neither proof nor
        refutal."""
        if not self.failure:
            self.failure = reason

    @property
    def status(self) -> Status:
        if self.confirmed:
            return "confirmed"
        if self.failure:
            return "could-not-evaluate"
        return "refuted" if self.ran else "not-reached"

    @property
    def note(self) -> str:
        if self.confirmed:
            return self.evidence
        if self.failure:
            return f"the run could not evaluate this finding: {self.failure}"
        if self.ran:
            return self.negative or "the line ran and the hazard was not observed"
        return self.unreached or "the line never ran"


def make_witnesses(diagnostics: Iterable[Diagnostic], path: str) -> list[Witness]:
    """A witness for each finding of one file that carries a claim the run can test."""
    witnesses: list[Witness] = []
    for diagnostic in diagnostics:
        claim = diagnostic.witness
        if claim is None or diagnostic.location.row < 1:
            continue
        primary = frozenset(range(diagnostic.location.row,
                                  max(diagnostic.end_location.row, diagnostic.location.row) + 1))
        witness = Witness(diagnostic, path, frozenset(claim.rows) or primary, claim.predicate,
                          operands=claim.operands, comparison=claim.comparison,
                          target=claim.target, primary_rows=primary)
        witness.related_rows = frozenset(
            r.location.row for r in diagnostic.related
            if os.path.abspath(r.filename) == path and r.location.row >= 1)
        witnesses.append(witness)
    return witnesses
