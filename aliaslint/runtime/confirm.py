"""Confirmation: run a program, and check each static finding against what the run did.

The program runs under the tracer (``aliaslint.runtime.tracer``).  The first time a frame of a
project file starts (a ``.py`` file of user code below the working directory: see
``aliaslint.runtime.usercode``), the file is checked statically, before any of its
lines runs; each finding's witness (what the analysis claims: the predicate to evaluate,
the rows where the hazard's operation runs, the operands by name) becomes a ``Witness``
that collects what the run shows.  The source is never read or parsed again.  A line hook
(``sys.settrace``, limited to the code objects that contain such rows) and the tracer's
``Tracer.watch`` seam feed the predicates while the program runs; the tracer's own
runtime findings are matched afterwards.  Hazards that complete at a later line (AL207's
snapshot written afterwards, AL208's argument written by the call) leave a record for
their frame, checked at its later lines by version counters.  Every static finding ends
with a status:

* ``confirmed``: the predicate held at least once when one of its rows ran;
* ``refuted``: its rows ran and the predicate never held (a false positive);
* ``not-reached``: none of its rows ran.
* ``could-not-evaluate``: a check of the run failed (the reason is in the note); neither
  proof nor refutal.

Runtime findings no static finding accounts for are returned too (status ``runtime``).
Nothing here calls user code: operands are read from frame locals through plain names and
attribute chains, and the program's exceptions pass through untouched.
"""

from __future__ import annotations

import inspect
import os
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import CodeType, FrameType
from typing import TYPE_CHECKING, Any, Optional

from aliaslint import registry
from aliaslint.config import CliOptions, Resolver
from aliaslint.diagnostics import META_CODES, Diagnostic
from aliaslint.runtime.dispatch import OpEvent
from aliaslint.runtime.frames import frame_of, overlaps
from aliaslint.runtime.hazards import codes as hazard_codes
from aliaslint.runtime.predicates import Pending, capture_snapshot, check_snapshot
from aliaslint.runtime.usercode import is_user_file
from aliaslint.runtime.witness import Witness, make_witnesses

if TYPE_CHECKING:
    from torch import Tensor

    from aliaslint.runtime.tracer import Tracer

# What `sys.settrace` calls: (frame, event, its argument) → the frame's local hook, or None.
_Hook = Callable[[FrameType, str, Any], Optional["_Hook"]]

# Code flags of frames that `return` on every `yield` / `await` and resume later.
_SUSPENDS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


# --- the run ----------------------------------------------------------------------------------


@dataclass
class Confirmation:
    """The outcome of one confirmed run."""

    exit_status: int
    diagnostics: list[Diagnostic]  # static findings with a status, then runtime-only ones
    notes: dict[int, str]  # id(diagnostic) → what the run showed
    files: list[str]  # the project files the program executed (absolute)

    def count(self, status: str) -> int:
        return sum(1 for d in self.diagnostics if d.status == status)

    def note(self, diagnostic: Diagnostic) -> str:
        return self.notes.get(id(diagnostic), "")


@dataclass
class _Session:
    cwd: str
    resolver: Resolver
    tracer: Tracer
    files: dict[str, bool] = field(default_factory=dict)  # path → is a project file
    checked: list[str] = field(default_factory=list)
    witnesses: list[Witness] = field(default_factory=list)
    at_row: dict[tuple[str, int], list[Witness]] = field(default_factory=dict)
    rows_in_file: dict[str, set[int]] = field(default_factory=dict)
    code_hooks: dict[int, tuple[CodeType, bool]] = field(default_factory=dict)
    extra: list[Diagnostic] = field(default_factory=list)
    lock: threading.RLock = field(default_factory=threading.RLock)
    # id(frame) → what earlier lines of that frame recorded for AL207 / AL208.
    pending: dict[int, list[Pending]] = field(default_factory=dict)
    in_callee: dict[tuple[str, int], list[Witness]] = field(default_factory=dict)

    # -- which files --------------------------------------------------------------------------

    def _is_project_file(self, path: str) -> bool:
        known = self.files.get(path)
        if known is None:
            known = (path.endswith(".py") and is_user_file(path, self.cwd)
                     and os.path.isfile(path))
            self.files[path] = known
            if known:
                self._analyse(path)
        return known

    def _analyse(self, path: str) -> None:
        from aliaslint.engine import check_file

        self.checked.append(path)
        settings = self.resolver.for_file(Path(path))
        diagnostics = check_file(Path(path), path, settings)
        self.extra += [d for d in diagnostics if d.code in META_CODES]
        witnesses = make_witnesses(diagnostics, path)
        for witness in witnesses:
            self.witnesses.append(witness)
            for row in witness.rows:
                self.at_row.setdefault((path, row), []).append(witness)
                self.rows_in_file.setdefault(path, set()).add(row)
            if witness.predicate.watches_ops:
                for row in witness.rows:
                    self.tracer.watch(path, row, self._on_op)
            if witness.predicate.watches_callee:
                # The write inside the callee, where the finding points: seen there even
                # when no version counter shows it (an argument passed as `x.data`).
                for row in witness.primary_rows:
                    self.in_callee.setdefault((path, row), []).append(witness)
                    self.tracer.watch(path, row, self._on_callee_op)

    # -- the line hook ------------------------------------------------------------------------

    def global_trace(self, frame: FrameType, event: str, arg: Any) -> _Hook | None:
        code = frame.f_code
        entry = self.code_hooks.get(id(code))
        if entry is None:
            entry = self.code_hooks[id(code)] = (code, self._wants(code))
        return self._local_trace if entry[1] else None

    def _wants(self, code: CodeType) -> bool:
        path = os.path.abspath(code.co_filename)
        with self.lock:
            if not self._is_project_file(path):
                return False
            rows = self.rows_in_file.get(path)
            if not rows:
                return False
            return any(line in rows for _, _, line in code.co_lines() if line is not None)

    def _local_trace(self, frame: FrameType, event: str, arg: Any) -> _Hook:
        if self.pending and event in ("line", "return", "exception"):
            records = self.pending.get(id(frame))
            if records:
                try:
                    self._follow(frame, event, records)
                except Exception as error:  # a witness never disturbs the program
                    for record in records:
                        record.witness.fail(error)
        if event in ("line", "exception"):
            key = (os.path.abspath(frame.f_code.co_filename), frame.f_lineno)
            witnesses = self.at_row.get(key)
            if witnesses:
                for witness in witnesses:
                    try:
                        if event == "line":
                            self._on_line(witness, frame)
                        else:
                            self._on_exception(witness, arg[1])
                    except Exception as error:  # a witness never disturbs the program
                        witness.fail(error)
        return self._local_trace

    def _on_line(self, witness: Witness, frame: FrameType) -> None:
        predicate = witness.predicate
        if predicate.needs_backward:
            if witness.backward_mark is None:
                witness.backward_mark = self.tracer.unpacked
            return
        witness.ran = True
        if witness.strength >= 2 or predicate.at_line is None:
            return
        self._remember(frame, predicate.at_line(witness, frame))

    # -- AL207 / AL208: what a line recorded, checked at the frame's later lines ----------

    def _remember(self, frame: FrameType, record: Pending | None) -> None:
        if record is None:
            return
        with self.lock:
            records = self.pending.setdefault(id(frame), [])
            # A snapshot statement over several rows starts each of them: one record.
            if record.tensors is None and any(r.witness is record.witness and r.tensors is None
                                              for r in records):
                return
            records.append(record)

    def _follow(self, frame: FrameType, event: str, records: list[Pending]) -> None:
        row = frame.f_lineno
        suspended = event == "return" and frame.f_code.co_flags & _SUSPENDS
        finished = event == "return" and not suspended
        keep: list[Pending] = []
        for record in records:
            witness = record.witness
            if record.code is not frame.f_code or witness.strength >= 2:
                continue  # a finished frame's record (its id was reused), or nothing to learn
            if witness.predicate.after_line is not None:
                witness.predicate.after_line(record)
                continue
            if record.tensors is None:  # the snapshot statement has not finished yet
                if event == "line" and row in witness.rows:
                    keep.append(record)
                    continue
                if event == "exception" and row in witness.rows:
                    continue  # the statement raised: nothing was assigned
                capture_snapshot(record, frame)
                if record.tensors is None:
                    continue
                if not finished:
                    keep.append(record)
                    continue
            if finished or row in witness.rows or row in witness.related_rows:
                if check_snapshot(record, frame, event) and not finished:
                    keep.append(record)
            else:
                keep.append(record)
        with self.lock:
            if keep:
                self.pending[id(frame)] = keep
            else:
                self.pending.pop(id(frame), None)

    def _on_exception(self, witness: Witness, error: BaseException) -> None:
        witness.ran = True
        if not isinstance(error, RuntimeError):
            return
        for message in witness.predicate.raises:
            if message in str(error):
                witness.confirm(f"torch raised \"{message}\" at this line")

    # -- ATen ops at a watched line -----------------------------------------------------------

    def _on_callee_op(self, event: OpEvent) -> None:
        """AL208: an op at the write inside the callee, while the call's line is pending in
        the caller: does it write memory of one of the call's tensor arguments?"""
        witnesses = self.in_callee.get((event.site.filename, event.site.line))
        if not witnesses:
            return
        try:
            writes = _written(event)
            if not writes:
                return
            with self.lock:
                records = [r for rs in self.pending.values() for r in rs
                           if any(r.witness is w for w in witnesses)
                           and r.witness.strength < 2]
            for record in records:
                for label, ref in record.roots:
                    argument = ref()
                    if argument is not None and any(
                            t is argument or overlaps(t, argument) for t in writes):
                        record.witness.confirm(
                            f"the in-place op at line {event.site.line}, inside the callee, "
                            f"wrote the memory of its argument `{label}`")
                        break
        except Exception as error:  # a witness never disturbs the program
            for witness in witnesses:
                witness.fail(error)

    def _on_op(self, event: OpEvent) -> None:
        witnesses = self.at_row.get((event.site.filename, event.site.line))
        if not witnesses:
            return
        try:
            for witness in witnesses:
                at_op = witness.predicate.at_op
                if at_op is not None:
                    at_op(witness, event)
            writes = _written(event)
            if not writes:
                return
            frame = frame_of(event.site.code)
            for witness in witnesses:
                witness.ran = True
                at_write = witness.predicate.at_write
                if at_write is not None:
                    at_write(witness, writes, frame)
        except Exception as error:  # a witness never disturbs the program
            for witness in witnesses:
                witness.fail(error)

    # -- afterwards ---------------------------------------------------------------------------

    def settle(self, runtime: list[Diagnostic]) -> list[Diagnostic]:
        """Match the tracer's runtime findings (at a finding's rows, or at its related rows in
        the same file: the write inside a helper the finding's call runs); return those no
        static finding accounts for."""
        self._settle_backward()
        unmatched: list[Diagnostic] = []
        codes = hazard_codes() if runtime else {}
        for finding in runtime:
            path = os.path.abspath(finding.filename)
            row = finding.location.row
            matched = False
            for witness in self.witnesses:
                if not witness.predicate.matches_tracer or witness.path != path:
                    continue
                code = witness.diagnostic.code
                rule = registry.get(code)
                if not (finding.code == code or rule is not None and finding.code in {
                        codes[hazard] for hazard in rule.confirmed_by}):
                    continue
                # At the row the witness watches, or (an in-place module's write, reported
                # where the module is built) at the finding's own primary row.
                if row in witness.rows or row == witness.diagnostic.location.row:
                    witness.ran = True
                    witness.confirm(f"the tracer saw it: {finding.message}")
                elif row in {r.location.row for r in witness.diagnostic.related
                             if os.path.abspath(r.filename) == path}:
                    witness.ran = True
                    witness.confirm(f"the tracer saw it at related line {row}: "
                                    f"{finding.message}")
                else:
                    continue
                witness.seen = witness.seen or finding.evidence
                matched = True
            if not matched:
                unmatched.append(finding)
        return unmatched


    def _settle_backward(self) -> None:
        """A hazard a backward pass completes (AL101) was reached when a backward pass read
        saved tensors after its row ran; with none, it was not reached."""
        unpacked = self.tracer.unpacked
        for witness in self.witnesses:
            if not witness.predicate.needs_backward or witness.ran:
                continue
            if witness.backward_mark is None:
                continue
            if unpacked > witness.backward_mark:
                witness.ran = True
                witness.deny("a backward pass ran after the line and read no saved tensor "
                             "the line had written")
            else:
                witness.unreached = "the line ran, but no backward pass ran after it"


def _written(event: OpEvent) -> list[Tensor]:
    """The tensors the operation wrote."""
    return list(event.written)


# --- entry point ------------------------------------------------------------------------------


class Confirming:
    """A confirmation session in this process: open it before the program's first line runs
    and close it once the program has ended; ``outcome`` then gives every finding its status.

    ``confirm`` runs a program in this process between the two; the launcher
    (``aliaslint.runtime.launch``) opens one in the program's own interpreter.
    """

    def __init__(self, tracer: Tracer, cli: CliOptions = CliOptions(),
                 cwd: str | None = None) -> None:
        cwd = os.path.abspath(cwd or os.getcwd())
        self._tracer = tracer
        self._session = _Session(cwd, Resolver(cli, Path(cwd)), tracer)
        self._previous: tuple[Any, Any] | None = None

    def open(self) -> None:
        self._previous = (sys.gettrace(), threading.gettrace())
        threading.settrace(self._session.global_trace)
        sys.settrace(self._session.global_trace)

    def close(self) -> None:
        if self._previous is None:
            return
        previous, previous_threads = self._previous
        self._previous = None
        sys.settrace(previous)
        # None clears the hook, as in sys.settrace; typeshed allows a function only.
        threading.settrace(previous_threads)

    def outcome(self, exit_status: int) -> Confirmation:
        """Every static finding with its status, then the runtime-only findings."""
        session = self._session
        runtime = session.settle(self._tracer.findings)
        notes: dict[int, str] = {}
        diagnostics: list[Diagnostic] = []
        for witness in session.witnesses:
            diagnostic = replace(witness.diagnostic, status=witness.status,
                                 evidence=witness.seen if witness.confirmed else None)
            notes[id(diagnostic)] = witness.note
            diagnostics.append(diagnostic)
        diagnostics += session.extra
        diagnostics.sort(key=lambda d: d.sort_key)
        diagnostics += runtime
        return Confirmation(exit_status, diagnostics, notes, list(session.checked))


def confirm(*, script: str | None = None, module: str | None = None, args: Iterable[str] = (),
            cli: CliOptions = CliOptions(), cwd: str | None = None,
            deep: bool = False) -> Confirmation:
    """Run ``script`` (or ``-m module``) with ``args`` in this process and give every static
    finding of the project files it executes a status (``deep``: under the tracer's dispatch
    mode too).  Paths in the findings are absolute."""
    from aliaslint.runtime.tracer import run_program, trace

    tracer = trace(deep=deep)
    confirming = Confirming(tracer, cli, cwd)
    confirming.open()
    try:
        status = run_program(tracer, script=script, module=module, args=list(args))
    finally:
        confirming.close()
    return confirming.outcome(status)
