"""Worker processes with a wall-clock limit per call: a call that overruns is stopped by
ending its process, which is then replaced.

A thread cannot be stopped while libcst parses (the parse is one call into native code),
so the limit per file needs a process.  Each worker runs one call at a time, so the parent
knows which call overran and for how long it has run.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections import deque
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any

# What answers a request instead of the call's result: (request, why, overran) -> answer;
# ``overran`` is False when the process died (killed for its memory, say).
Failure = Callable[[Any, str, bool], Any]


class Worker:
    """One process that answers ``function(request)`` for each request it is sent."""

    def __init__(self, context: Any, function: Callable[[Any], Any],
                 initializer: Callable[..., None] | None = None, initargs: tuple = (), *,
                 after: Callable[[], None] | None = None):
        """``after()`` runs in the process once each answer is sent: work that need not
        delay it (the language server's worker collects its garbage there)."""
        self._context = context
        self._function = function
        self._initializer = initializer
        self._initargs = initargs
        self._after = after
        self._process: Any = None
        self._connection: Connection | None = None
        self.request: Any = None  # the request being answered, if any
        self.started = 0.0  # when it was sent (time.monotonic)

    def _start(self) -> None:
        parent, child = self._context.Pipe()
        self._process = self._context.Process(
            target=_serve, args=(child, self._function, self._initializer, self._initargs,
                                 self._after),
            daemon=True, name="aliaslint-worker")
        self._process.start()
        child.close()
        self._connection = parent

    @property
    def connection(self) -> Connection:
        assert self._connection is not None
        return self._connection

    def send(self, request: Any) -> None:
        if self._process is None or not self._process.is_alive():
            self.stop()
            self._start()
        self.request, self.started = request, time.monotonic()
        self.connection.send(request)

    def receive(self) -> Any:
        """The answer to the request sent; EOFError when the process died."""
        answer = self.connection.recv()
        self.request = None
        return answer

    def call(self, request: Any, timeout: float, failure: Failure) -> Any:
        """The answer to one request, or ``failure(request, why)`` when it overran (the
        process is stopped) or the process died."""
        self.send(request)
        if not self.connection.poll(timeout):
            self.stop()
            return failure(request, _overran(timeout), True)
        try:
            return self.receive()
        except (EOFError, OSError):
            return failure(request, self.died(), False)

    def died(self) -> str:
        code = None
        if self._process is not None:
            self._process.join(5)  # its pipe closed as it died: reap it for its status
            code = self._process.exitcode
        self.stop()
        return _died(code)

    def stop(self) -> None:
        """End the process: an idle one is told (it ends when its pipe closes), a busy one
        is killed at once (a parse in native code does not return to be told)."""
        idle = self.request is None
        if self._connection is not None:
            if idle:
                # Told in so many words: a forked process (this one's, or a sibling's) may
                # hold a copy of the parent's end of the pipe, so closing it is no EOF there.
                try:
                    self._connection.send(_STOP)
                except OSError:
                    pass
            self._connection.close()
        if self._process is not None:
            if idle:
                self._process.join(1)
            if self._process.is_alive():
                self._process.kill()
            self._process.join()
            self._process.close()
        self._process = self._connection = None
        self.request = None


# What an idle worker is sent to end it.
_STOP = "aliaslint-worker-stop"


def _overran(timeout: float) -> str:
    return f"took longer than {timeout:g} s"


def _died(code: int | None) -> str:
    if code is not None and code < 0:
        return f"its worker process was ended by signal {-code} (out of memory?)"
    return f"its worker process ended (exit status {code})"


def _serve(connection: Connection, function: Callable[[Any], Any],
           initializer: Callable[..., None] | None, initargs: tuple,
           after: Callable[[], None] | None = None) -> None:
    if initializer is not None:
        initializer(*initargs)
    while True:
        try:
            request = connection.recv()
        except (EOFError, OSError):  # the parent is gone
            os._exit(0)
        if isinstance(request, str) and request == _STOP:
            os._exit(0)
        connection.send(function(request))
        if after is not None:
            after()


def _stretches(indices: range, count: int) -> list[deque[int]]:
    """``indices`` cut into ``count`` contiguous stretches of near-equal length."""
    size, extra = divmod(len(indices), count)
    cuts = [indices.start + part * size + min(part, extra) for part in range(count + 1)]
    return [deque(range(cuts[part], cuts[part + 1])) for part in range(count)]


def run_all(requests: Sequence[Any], function: Callable[[Any], Any], workers: int,
            timeout: Callable[[Any], float], failure: Failure, *, context: Any = None,
            initializer: Callable[..., None] | None = None, initargs: tuple = (),
            done: Callable[[int], None] | None = None, shared: int | None = None
            ) -> list[Any]:
    """``function(request)`` for each request, answered in order, from ``workers``
    processes; a request that takes longer than ``timeout(request)`` seconds (wall clock)
    is answered ``failure(request, why, True)`` and its worker replaced, one whose worker
    died ``failure(request, why, False)``.  ``done(count)`` is told how many are answered.

    The requests are served in their order, by whichever worker is free.  With ``shared``,
    only the first ``shared`` are; the rest are cut into one stretch per worker, each served
    in order by its own worker (requests next to each other stay in one process, which
    keeps what they have in common), and a worker whose stretch is done takes the last
    request of the longest stretch left."""
    context = context or multiprocessing.get_context()
    answers: list[Any] = [None] * len(requests)
    pool = [Worker(context, function, initializer, initargs)
            for _ in range(max(1, min(workers, len(requests))))]
    waiting = deque(range(len(requests) if shared is None else min(shared, len(requests))))
    stretches = _stretches(range(len(waiting), len(requests)), len(pool))
    running: dict[int, tuple[int, float]] = {}  # id(worker) -> (request's index, deadline)
    finished = 0

    def next_request(worker: Worker) -> None:
        if waiting:
            index = waiting.popleft()
        else:
            own = stretches[pool.index(worker)]
            if own:
                index = own.popleft()
            else:
                longest = max(stretches, key=len)
                if not longest:
                    return
                index = longest.pop()
        worker.send(requests[index])
        running[id(worker)] = (index, worker.started + timeout(requests[index]))

    try:
        for worker in pool:
            next_request(worker)
        while running:
            busy = [worker for worker in pool if id(worker) in running]
            left = min(running[id(worker)][1] for worker in busy) - time.monotonic()
            ready = wait([worker.connection for worker in busy], timeout=max(left, 0))
            now = time.monotonic()
            for worker in busy:
                index, deadline = running[id(worker)]
                request = requests[index]
                if worker.connection in ready:
                    try:
                        answers[index] = worker.receive()
                    except (EOFError, OSError):
                        answers[index] = failure(request, worker.died(), False)
                elif now >= deadline:
                    worker.stop()
                    answers[index] = failure(request, _overran(timeout(request)), True)
                else:
                    continue
                finished += 1
                del running[id(worker)]
                next_request(worker)
                if done is not None:
                    done(finished)
    finally:
        for worker in pool:
            worker.stop()
    return answers
