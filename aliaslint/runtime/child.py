"""What runs inside each Python process of a traced job, from interpreter start-up on.

``aliaslint.runtime.launch`` starts the program as ``python script.py`` (or ``-m``, or under
``torch.distributed.run``) with ``runtime/startup`` first on ``PYTHONPATH``, so every Python
process of the job, children included, imports its ``sitecustomize``, which calls ``start``.
The environment says which run the process belongs to (``ENV_RUN``, a directory holding the
run's settings and one results file per traced process) and, for the process aliaslint
itself started, its role (``ENV_ROLE``, read once and removed so children do not inherit it):

The role carries the pid of the process that started this one (``main:1234``).

* ``main``: the program (or one rank of it).  torch is imported and the trace starts before
  the program's first line; a confirmation session too with ``check --trace``.
* ``agent``: torchrun's own process.  Not traced; it hands ``main`` on to the ranks it starts.
* none: a descendant.  DataLoader workers are traced whatever their start method (fork
  inherits the parent's trace, spawn and forkserver start one when the worker loop starts);
  other processes only when the run follows children, from the moment they import torch.

Each traced process writes its findings as JSON records when it ends, labelled with its rank
and worker id; the launcher merges them.  The tracer is used through its public API only:
``trace()``, entering and leaving it, and ``findings``.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
import os
import sys
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aliaslint.runtime.confirm import Confirming
    from aliaslint.runtime.tracer import Tracer

ENV_RUN = "ALIASLINT_TRACE_RUN"
ENV_ROLE = "ALIASLINT_TRACE_ROLE"
SETTINGS = "settings.json"
RECORDS = "records"

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_PROCESS: _Process | None = None
# sys.path when the hook runs: before the interpreter puts the program's directory first.
_HOOK_PATH: list[str] = []


def start(hook_file: str) -> None:
    """Join this process to the run named by the environment, if any (see the module)."""
    global _PROCESS
    startup = os.path.dirname(os.path.abspath(hook_file))
    # As in a plain run, sys.path does not hold the hook's directory.
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != startup]
    _HOOK_PATH[:] = sys.path
    run = os.environ.get(ENV_RUN)
    role, _, parent = os.environ.pop(ENV_ROLE, "").partition(":")
    if run and _PROCESS is None:
        try:
            with open(os.path.join(run, SETTINGS), encoding="utf-8") as file:
                settings = json.load(file)
        except (OSError, ValueError):
            settings = None  # the run is over (an orphan outliving it): nothing to report to
        if settings is not None:
            _PROCESS = _Process(run, settings, role, int(parent) if parent.isdigit() else None)
            if role != "agent" and not settings.get("follow_children"):
                _environment_as_given(startup)
            try:
                _PROCESS.start()
            except Exception:  # the trace is lost, never the program
                pass
    _chain_user_sitecustomize(startup)


@contextlib.contextmanager
def _imports_of_aliaslint() -> Iterator[None]:
    """Imports made by aliaslint from the program's process find aliaslint's dependencies
    where the interpreter found them before the program ran, never a module of the same name
    in the program's directory (a ``libcst.py`` next to the script)."""
    program_path = sys.path[:]
    sys.path[:] = _HOOK_PATH or program_path
    try:
        yield
    finally:
        sys.path[:] = program_path


def _environment_as_given(startup: str) -> None:
    """``os.environ`` as the user's own run has it: without the hook's ``PYTHONPATH`` entry
    and the run's directory.  Only the mapping changes, not the process's environment, which
    the processes the program starts inherit (DataLoader workers, spawn and forkserver
    included), so they still join the run.  torchrun's agent keeps both: it builds each
    rank's environment from a copy of ``os.environ``, and so does a program that starts a
    child with ``env={**os.environ, ...}``; with ``--follow-children`` they stay visible."""
    data = getattr(os.environ, "_data", None)
    if not isinstance(data, dict):
        return
    try:
        key = os.environ.encodekey("PYTHONPATH")
        value = os.environ.get("PYTHONPATH")
        if value is not None:
            first, separator, rest = value.partition(os.pathsep)
            if os.path.abspath(first or os.curdir) == startup:
                if separator:
                    data[key] = os.environ.encodevalue(rest)
                else:
                    del data[key]
        data.pop(os.environ.encodekey(ENV_RUN), None)
    except Exception:  # another os.environ than CPython's: it shows the hook, nothing worse
        pass


def _chain_user_sitecustomize(startup: str) -> None:
    """Run the ``sitecustomize`` this hook shadows, as ``site`` would have."""
    import importlib.machinery
    import importlib.util

    spec = importlib.machinery.PathFinder.find_spec(
        "sitecustomize", [p for p in sys.path if os.path.abspath(p or os.curdir) != startup])
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


class _Process:
    """This process's part of the run: its tracer, its label, and its results file."""

    def __init__(self, run: str, settings: dict[str, Any], role: str,
                 parent: int | None) -> None:
        self.run = run
        self.settings = settings
        self.role = role
        self.parent = parent  # the process that started this one as the program or agent
        self.pid = os.getpid()
        self.tracer: Tracer | None = None
        self.started_here = False  # False for a trace inherited through fork
        self.confirming: Confirming | None = None
        self.reporting = False
        self.written = False
        self.worker: int | None = None
        self.error: BaseException | None = None
        self.program_started = False  # the program's own code began to run (main only)
        # Findings the process had when it forked: the child reports only its own.
        self.inherited: frozenset[tuple] = frozenset()
        self._at_fork: frozenset[tuple] = frozenset()

    # -- roles ----------------------------------------------------------------------------

    def start(self) -> None:
        if self.role in ("main", "agent"):
            self._end_with_parent()
        if self.role == "agent":
            # torchrun's ranks run the program: each is a main process of its own.
            os.environ[ENV_ROLE] = f"main:{os.getpid()}"
            return
        os.register_at_fork(before=self._before_fork, after_in_child=self._after_fork)
        _after_import("torch", self._torch_imported)
        if self.role != "main":
            return
        self._watch_for_the_program()
        try:
            import torch  # noqa: F401  (the trace starts from here, before the program)
        except Exception as error:
            self.write({"error": f"{type(error).__name__}: {error}"})
            os._exit(2)
        sys.excepthook = _user_frames_only(sys.excepthook, self)
        confirm = self.settings.get("confirm")
        if confirm is not None:
            # Opened after torch's import: its line hook sees every new frame, and only the
            # program's matter.
            self._open_confirmation(confirm)
        self.begin()
        atexit.register(self.finish)

    def _watch_for_the_program(self) -> None:
        """Note when the program's code starts: its module is executed as ``__main__``
        (the ``exec`` audit event of code compiled from ``__main__.__file__``).  A missing
        script, a syntax error or an unknown module end the process before that, and the
        launcher then says the program did not start instead of "no hazard was hit"."""

        def hook(event: str, args: tuple) -> None:
            if self.program_started or event != "exec":
                return
            try:
                filename = getattr(sys.modules.get("__main__"), "__file__", None)
                code = args[0] if args else None
                if filename is not None and getattr(code, "co_filename", None) == filename:
                    self.program_started = True
            except Exception:  # an audit hook that raises would fail the program's exec
                pass

        sys.addaudithook(hook)

    def _torch_imported(self, torch: Any) -> None:
        _wrap_worker_loop(self)
        if self.role != "main" and self.tracer is None and self.settings.get("follow_children"):
            self.begin()
            atexit.register(self.finish)
            self._finish_as_multiprocessing_child()

    def as_worker(self, worker_id: int | None) -> None:
        """The DataLoader worker loop starts in this process."""
        self.worker = worker_id
        if self.tracer is None:
            self.begin()
        self.reporting = True

    # -- the tracer -----------------------------------------------------------------------

    def begin(self) -> None:
        from aliaslint.runtime.tracer import trace

        tracer = self.tracer or trace(deep=bool(self.settings.get("deep")))
        tracer.__enter__()
        self.tracer, self.started_here, self.reporting = tracer, True, True

    def _open_confirmation(self, options: dict[str, Any]) -> None:
        from pathlib import Path

        from aliaslint.config import CliOptions, Selection
        from aliaslint.runtime.confirm import Confirming
        from aliaslint.runtime.tracer import trace

        select = options.get("select")
        cli = CliOptions(
            selection=Selection(select=tuple(select) if select is not None else None,
                                extend_select=tuple(options.get("extend_select", ())),
                                ignore=tuple(options.get("ignore", ()))),
            config=Path(options["config"]) if options.get("config") else None,
            confidence=options.get("confidence"), isolated=bool(options.get("isolated")))
        with _imports_of_aliaslint():
            # The static check of each file the program runs needs the parser and the rules:
            # loaded now, from where aliaslint was found, not later from the program's
            # directory (a `libcst.py` next to the script).
            from aliaslint import checking, registry  # noqa: F401

            registry.rules()
        self.tracer = trace(deep=bool(self.settings.get("deep")))
        self.confirming = Confirming(self.tracer, cli, options.get("cwd"))
        self.confirming.open()

    def finish(self) -> None:
        """Write this process's record, once; a process that forked from a traced one and
        was not asked to report (or already did) writes nothing."""
        if self.written or not self.reporting or os.getpid() != self.pid:
            return
        self.written = True
        record: dict[str, Any] = {"label": self.label(), "pid": self.pid}
        with _imports_of_aliaslint():  # the tracer's last imports (rule names)
            try:
                tracer = self.tracer
                if tracer is not None and self.started_here:
                    error = self.error
                    tracer.__exit__(type(error) if error else None, error,
                                    error.__traceback__ if error else None)
                if self.confirming is not None:
                    self.confirming.close()
                    outcome = self.confirming.outcome(0)
                    record["confirmation"] = [
                        {**d.to_json(), "note": outcome.note(d)} for d in outcome.diagnostics]
                    record["files"] = outcome.files
                elif tracer is not None:
                    record["findings"] = [d.to_json() for d in tracer.findings
                                          if _key(d) not in self.inherited]
            except Exception as error:  # the record says what failed; the program is unaffected
                record["error"] = f"{type(error).__name__}: {error}"
        if self.role == "main":
            # A compiled script (`python prog.pyc`) runs without an `exec` event: no claim.
            loader = getattr(sys.modules.get("__main__"), "__loader__", None)
            record["started"] = self.program_started or (
                type(loader).__name__ == "SourcelessFileLoader")
        if isinstance(self.error, KeyboardInterrupt) and self.role == "main":
            record["interrupted"] = True
        self.write(record)
        if record.get("interrupted"):
            _still_die_of_sigint()

    def label(self) -> str:
        parts = []
        if os.environ.get("RANK") is not None and os.environ.get("WORLD_SIZE") is not None:
            parts.append(f"rank {os.environ['RANK']}")
        if self.worker is not None:
            parts.append(f"worker {self.worker}")
        elif self.role != "main":
            process = sys.modules.get("multiprocessing.process")
            name = process.current_process().name if process is not None else "MainProcess"
            parts.append(name if name != "MainProcess" else f"process {self.pid}")
        return " ".join(parts) or "main"

    def write(self, record: dict[str, Any]) -> None:
        """One file per process, moved into place whole: the launcher never reads half."""
        import tempfile

        directory = os.path.join(self.run, RECORDS)
        try:
            os.makedirs(directory, exist_ok=True)
            handle, temporary = tempfile.mkstemp(prefix=f".{self.pid}-", dir=directory)
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                json.dump(record, file)
            os.replace(temporary, os.path.join(directory, f"{self.pid}-{os.urandom(4).hex()}.json"))
        except OSError:
            pass  # the run is gone (the launcher was killed): nobody would read it

    # -- processes ------------------------------------------------------------------------

    def _before_fork(self) -> None:
        tracer = self.tracer
        try:
            self._at_fork = frozenset(map(_key, tracer.findings)) if tracer else frozenset()
        except Exception:
            self._at_fork = frozenset()

    def _after_fork(self) -> None:
        self.pid = os.getpid()
        self.inherited = self._at_fork
        self.started_here = False
        self.written = False
        self.role = ""
        self.worker = None
        self.reporting = self.tracer is not None and bool(self.settings.get("follow_children"))
        if self.confirming is not None:
            # The line hook came along with the thread that forked; the child's findings
            # are runtime ones, so it has nothing to confirm.
            import threading

            if sys.gettrace() is not None:
                sys.settrace(None)
            threading.settrace(None)  # type: ignore[arg-type]
            self.confirming = None
        if self.reporting:
            self._finish_as_multiprocessing_child()

    def _finish_as_multiprocessing_child(self) -> None:
        """Children of ``multiprocessing`` started by fork or forkserver end with
        ``os._exit`` (no ``atexit``) after running its finalizers: write the record there."""
        util = sys.modules.get("multiprocessing.util")
        if util is None:
            return
        if util.process.parent_process() is not None:  # the child's bootstrap has run
            _arm_finalizer(self)
        else:
            # Finalizers registered now would be cleared when the child's bootstrap starts;
            # an after-fork callback runs right after that.
            util.register_after_fork(self, _arm_finalizer)

    def _end_with_parent(self) -> None:
        """The program (torchrun's agent, each rank) ends, with SIGTERM, when the process that
        started it dies, ``kill -9`` included: nothing of the job outlives aliaslint."""
        parent = self.parent
        if sys.platform != "linux" or parent is None or os.getppid() != parent:
            return
        import ctypes
        import signal

        PR_SET_PDEATHSIG = 1
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        except (OSError, AttributeError):
            return
        if os.getppid() != parent:  # gone before the request
            os.kill(os.getpid(), signal.SIGTERM)


def _still_die_of_sigint() -> None:
    """After an uncaught KeyboardInterrupt CPython ends the process with SIGINT, as shells
    expect, unless code run at exit imported a module (that clears its note of it, in
    ``run_eval_code_obj``); writing the record did.  Put the note back where it can be
    found (CPython 3.11); elsewhere the launcher reads ``interrupted`` from the record."""
    import ctypes

    try:
        ctypes.c_int.in_dll(ctypes.pythonapi, "_Py_UnhandledKeyboardInterrupt").value = 1
    except (ValueError, AttributeError):
        pass


def _arm_finalizer(process: _Process) -> None:
    import multiprocessing.util

    multiprocessing.util.Finalize(process, process.finish, exitpriority=0)


def _key(diagnostic: Any) -> tuple:
    return (diagnostic.code, diagnostic.filename, diagnostic.location)


# --- torch ------------------------------------------------------------------------------------


def _after_import(name: str, callback: Callable[[Any], None]) -> None:
    """Call ``callback(module)`` once top-level module ``name`` has been imported (now, if
    it already was), from within the import statement that first imports it."""
    if name in sys.modules:
        callback(sys.modules[name])
        return
    import importlib.abc
    import importlib.util

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path, target=None):
            if fullname != name:
                return None
            sys.meta_path.remove(self)
            spec = importlib.util.find_spec(name)
            loader = spec.loader if spec is not None else None
            if loader is None or not hasattr(loader, "exec_module"):
                return spec
            exec_module = loader.exec_module

            def exec_then_call_back(module):
                exec_module(module)
                try:
                    callback(module)
                except Exception:  # the hook never breaks the program's import
                    pass

            # The loader belongs to this spec alone.
            loader.exec_module = exec_then_call_back  # type: ignore[method-assign]
            return spec

    sys.meta_path.insert(0, Finder())


def _wrap_worker_loop(process: _Process) -> None:
    """Make each DataLoader worker tell this module that it starts, and end with its record.

    DataLoader names the loop as ``torch.utils.data._utils.worker._worker_loop`` when it
    starts workers, and spawned workers unpickle it by that name; the wrapper takes its place
    (with the same name, so pickling finds it) in every process of the run.
    """
    worker = sys.modules.get("torch.utils.data._utils.worker")
    loop = getattr(worker, "_worker_loop", None)
    if loop is None or getattr(loop, "_aliaslint_original", None) is not None:
        return
    import inspect

    signature = inspect.signature(loop)

    @functools.wraps(loop)
    def traced_worker_loop(*args, **kwargs):
        try:
            worker_id = signature.bind(*args, **kwargs).arguments.get("worker_id")
            process.as_worker(worker_id if isinstance(worker_id, int) else None)
        except Exception:
            pass
        try:
            return loop(*args, **kwargs)
        except BaseException as error:
            process.error = error
            raise
        finally:
            process.finish()

    traced_worker_loop._aliaslint_original = loop  # type: ignore[attr-defined]
    setattr(worker, "_worker_loop", traced_worker_loop)


# --- tracebacks -------------------------------------------------------------------------------


def _user_frames_only(hook: Callable[..., Any], process: _Process) -> Callable[..., Any]:
    """An excepthook that drops the tracer's frames (and the torch frames the tracer called)
    from an uncaught exception's traceback, as a plain run would print it, and remembers the
    exception for the tracer's end."""

    def excepthook(kind: type[BaseException], error: BaseException,
                   tb: TracebackType | None) -> None:
        process.error = error
        try:
            seen: set[int] = set()
            current: BaseException | None = error
            while current is not None and id(current) not in seen:
                seen.add(id(current))
                current.__traceback__ = _without_ours(current.__traceback__)
                current = current.__cause__ or current.__context__
            tb = error.__traceback__
        except Exception:
            pass
        hook(kind, error, tb)

    return excepthook


def _without_ours(tb: TracebackType | None) -> TracebackType | None:
    """The traceback without aliaslint's frames, the library frames they called, and the
    wrappers torch puts around callbacks (``torch._disable_dynamo``) that led into them:
    a plain run has none of these."""
    from aliaslint.runtime.usercode import is_user_file

    kept: list[TracebackType] = []
    inside = False
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if os.path.abspath(filename).startswith(_PACKAGE):
            inside = True
            while kept and _is_callback_wrapper(kept[-1].tb_frame.f_code.co_filename):
                kept.pop()
        elif not inside or is_user_file(filename):
            inside = False
            kept.append(tb)
        tb = tb.tb_next
    for first, second in zip(kept, kept[1:]):
        first.tb_next = second
    if kept:
        kept[-1].tb_next = None
    return kept[0] if kept else None


def _is_callback_wrapper(filename: str) -> bool:
    path = filename.replace(os.sep, "/")
    return path.endswith("/torch/_compile.py") or "/torch/_dynamo/" in path
