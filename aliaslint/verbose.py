"""``check -v``: what a run read and skipped, on standard error, one line each.

A flag rather than ``logging``: ``check`` starts in a fresh process for every pre-commit run,
and worker processes forked from it inherit the flag.
"""

from __future__ import annotations

import sys

enabled = False


def note(message: str) -> None:
    if enabled:
        print(f"aliaslint: {message}", file=sys.stderr, flush=True)
