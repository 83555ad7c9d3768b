"""The garbage collector around one check, in a process that checks file after file (a
`check` worker, the language server's worker).

A check allocates millions of objects that live until it ends (the file's tree, the values
the analysis makes) and little cyclic garbage.  At CPython's default threshold (a young
collection every 700 allocations, an older one every tenth of those) the collector walks
the file's growing tree again and again: a fifth of a cold check.  While a check runs the
young threshold is 100,000, so the collector runs a few times per file; after it, one
collection frees what cycles remain (memory stays that of one file's check) and what
outlives the check (the tables, the trees kept for the files that import it) is frozen out
of the collector's sight, as it would otherwise be walked many times per later check.
Those kept trees hold no cycles: when they are let go, reference counting frees them.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

_CHECKING = (100_000, 20, 100)
_checking = 0  # checks under way in this process (one_check)


@contextmanager
def one_check(unfreeze: bool = False, *, settle: bool = True) -> Iterator[None]:
    """Run one check under the checking thresholds, then collect and freeze (``settle``:
    False leaves that to the caller's ``settled()``, once the check's answer is sent)."""
    global _checking
    thresholds = gc.get_threshold()
    gc.set_threshold(*_CHECKING)
    _checking += 1
    try:
        yield
    finally:
        _checking -= 1
        gc.set_threshold(*thresholds)
        if settle:
            settled(unfreeze)


def settled(unfreeze: bool = False) -> None:
    """Collect what a check left and freeze what outlives it.  ``unfreeze``: look at
    everything kept once more first (a long-lived process does so every few checks, so
    that nothing let go in a cycle stays for long)."""
    if unfreeze:
        gc.unfreeze()
    gc.collect()
    gc.freeze()


def imported() -> None:
    """What was just imported (libcst, the analysis, the rules and their tables: over a
    million objects) lives as long as the process: it is frozen out of the collector's
    sight at once, instead of walked by the collection after the first check (a second
    of CPU per process).  Before a fork it also spares the workers' copies of those pages,
    which a collection in each worker would write to."""
    gc.freeze()


def parsed() -> None:
    """The checked file's tree was just parsed, before its analysis.  It lives as long as
    the check, or longer (kept for the files that import it), and holds no cycle; what the
    check made before it (the screen's verdict, CPython's tree) holds none either.  So
    within ``one_check`` it is frozen at once: the collection after the check then walks
    what the analysis left, not the tree (most of what survives a check)."""
    if _checking:
        gc.freeze()
