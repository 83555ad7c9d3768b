"""A progress line on standard error for long runs: files done of all, and the rate.

Shown only on a terminal, and only once a run has lasted ``DELAY`` seconds, so short runs,
pipes, CI logs and editors never see it; the line is erased when the run ends.
"""

from __future__ import annotations

import time
from typing import Callable, TextIO

DELAY = 1.0
# At most this many redraws a second: a terminal write costs more than a cached file.
REDRAWS = 10


class ProgressLine:
    def __init__(self, stream: TextIO, delay: float = DELAY,
                 clock: Callable[[], float] = time.monotonic):
        self.stream, self.delay, self.clock = stream, delay, clock
        self.start = clock()
        self.drawn = 0.0  # when the line was last drawn (0: never)

    @classmethod
    def for_terminal(cls, stream: TextIO) -> ProgressLine | None:
        try:
            return cls(stream) if stream.isatty() else None
        except (AttributeError, ValueError):  # a replaced or closed stream
            return None

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        elapsed = now - self.start
        if elapsed < self.delay or now - self.drawn < 1 / REDRAWS and done < total:
            return
        rate = done / elapsed if elapsed > 0 else 0.0
        self.stream.write(f"\r\x1b[K{done:,}/{total:,} files checked ({rate:,.0f} files/s)")
        self.stream.flush()
        self.drawn = now

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
