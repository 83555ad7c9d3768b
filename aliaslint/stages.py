"""Cumulative CPU time per stage of a check, so that a regression shows where it is.

Counted only when ``ALIASLINT_STAGES`` is set in the environment (or ``check -v`` asks): the
normal path pays one flag test per stage and file.  Each stage's time is its own, the stages
inside it left out (a file the analysis loads is parsed inside the analysis: that time is
"summaries", not "analysis").  Worker processes send theirs back with each file's result.

screen     read, decode, prefilter, CPython's compile, quiet proof, budget
parse      libcst's parse of the checked file
analysis   the abstract interpreter over it
summaries  the other files of the program the analysis loads (read, screened, parsed)
rules      the rules' checks over the events, findings located and suppressed
report     the findings rendered
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from typing import Iterator

NAMES = ("screen", "parse", "analysis", "summaries", "rules", "report")

enabled = bool(os.environ.get("ALIASLINT_STAGES"))
totals: dict[str, float] = dict.fromkeys(NAMES, 0.0)
_open: list[list[float]] = []  # [start, time of the stages inside it]


@contextmanager
def stage(name: str) -> Iterator[None]:
    if not enabled:
        yield
        return
    entry = [time.process_time(), 0.0]
    _open.append(entry)
    try:
        yield
    finally:
        _open.pop()
        spent = time.process_time() - entry[0]
        totals[name] = totals.get(name, 0.0) + spent - entry[1]
        if _open:
            _open[-1][1] += spent


def snapshot() -> dict[str, float]:
    return dict(totals)


def since(before: dict[str, float]) -> dict[str, float]:
    """What each stage spent since ``before`` (a snapshot)."""
    return {name: spent - before.get(name, 0.0) for name, spent in totals.items()}


def add(spent: dict[str, float] | None) -> None:
    """Count time another process spent (a worker's, with its result)."""
    for name, seconds in (spent or {}).items():
        totals[name] = totals.get(name, 0.0) + seconds


def line() -> str:
    return ", ".join(f"{name} {totals.get(name, 0.0):.2f} s" for name in NAMES)
