"""Run a traced program in a fresh interpreter, as ``python`` runs it, and gather what every
process of the job found.

The program is started as ``python script.py ARGS`` (or ``python -m MODULE``, or under
``python -m torch.distributed.run`` for several ranks) with ``runtime/startup`` first on
``PYTHONPATH``: its ``sitecustomize`` joins each Python process of the job to the run
(``aliaslint.runtime.child``), and each traced process leaves one JSON record in the run's
directory when it ends.  So the program sees what a plain run gives it (an absolute
``__file__``, the ``builtins`` module, its loader, one frame at module level, tracebacks of
its own frames), and its standard streams, exit status and signals are its own.

Records are merged here: one finding per (code, location), with the processes that hit it
when the job had several; under ``torchrun ... -m aliaslint trace`` the last rank of a node
to finish merges the node's records (``share_with_node``).
"""

from __future__ import annotations

import codecs
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import IO, Any

from aliaslint.diagnostics import Diagnostic, Status
from aliaslint.evidence import Process
from aliaslint.interpreter import interpreter_options
from aliaslint.runtime.child import ENV_ROLE, ENV_RUN, RECORDS, SETTINGS

_RUN_PREFIX = "aliaslint-trace-"
_MEETING_PREFIX = "aliaslint-ranks-"
STARTUP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "startup")

# Interpreter options that would keep the start-up hook from running (-I and -E ignore
# PYTHONPATH, -S skips site); the program is not run with them.
_HOOK_BLOCKERS = frozenset({"-I", "-E", "-S"})

# Signals someone sends to aliaslint meaning the program.  SIGINT is not among them: Ctrl-C
# reaches every process of the terminal's foreground group, the program included.
_FORWARDED = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP", "SIGUSR1", "SIGUSR2")
                   if hasattr(signal, name))


@dataclass(frozen=True)
class Program:
    """What to run: a script or a module, and its arguments."""

    target: str
    args: tuple[str, ...] = ()
    module: bool = False


@dataclass(frozen=True)
class Options:
    nproc_per_node: int | None = None  # run under torch.distributed.run with this many ranks
    follow_children: bool = False  # trace children that import torch, not only DataLoader's
    # With check --trace: the options of the confirmation session each main process opens.
    confirm: dict[str, Any] | None = None
    deep: bool = False  # the tracer's dispatch mode too (`--deep`)


@dataclass
class Run:
    """The exit status of the job and the records of its traced processes."""

    exit_status: int
    records: list[dict[str, Any]] = field(default_factory=list)

    @property
    def error(self) -> str | None:
        """Why the program could not be traced (torch failed to import), if it was not run."""
        for record in self.records:
            if "error" in record and "label" not in record:
                return str(record["error"])
        return None

    @property
    def started(self) -> bool:
        """False when the program never began to run (a missing script, a syntax error, an
        unknown module): every main process says so, and the job failed as Python fails."""
        mains = [r for r in self.records if "started" in r]
        return self.exit_status == 0 or not mains or any(r["started"] for r in mains)

    @property
    def several(self) -> bool:
        return len(self.records) > 1 or any(r.get("label", "main") != "main"
                                            for r in self.records)

    def findings(self) -> list[Diagnostic]:
        """The runtime findings of every process, one per (code, location)."""
        return _merged((r.get("label", "main"), Diagnostic.from_json(d))
                       for r in self.records for d in r.get("findings", ())
                       ) if self.several else sorted(
            (Diagnostic.from_json(d) for r in self.records for d in r.get("findings", ())),
            key=lambda d: d.sort_key)

    def confirmation(self) -> tuple[list[Diagnostic], dict[int, str], list[str]]:
        """Static findings with their status, merged over the processes that confirmed (the
        best status wins: confirmed, could not evaluate, refuted, not reached), then the
        runtime-only findings of every process; the notes; the files checked."""
        static: dict[tuple, tuple[Diagnostic, str]] = {}
        runtime: list[tuple[str, Diagnostic]] = []
        files: dict[str, None] = {}
        for record in self.records:
            label = record.get("label", "main")
            files.update(dict.fromkeys(record.get("files", ())))
            for data in record.get("confirmation", ()):
                diagnostic = Diagnostic.from_json(data)
                if diagnostic.status == "runtime":
                    runtime.append((label, diagnostic))
                    continue
                key = (diagnostic.code, diagnostic.filename, diagnostic.cell, diagnostic.location,
                       diagnostic.message)
                known = static.get(key)
                if known is None or _RANK[diagnostic.status] > _RANK[known[0].status]:
                    static[key] = (diagnostic, str(data.get("note", "")))
            runtime += [(label, Diagnostic.from_json(d)) for d in record.get("findings", ())]
        notes: dict[int, str] = {}
        diagnostics = []
        for diagnostic, note in static.values():
            notes[id(diagnostic)] = note
            diagnostics.append(diagnostic)
        diagnostics.sort(key=lambda d: d.sort_key)
        if self.several:
            diagnostics += _merged(runtime)
        else:
            diagnostics += sorted((d for _, d in runtime), key=lambda d: d.sort_key)
        return diagnostics, notes, list(files)

    def problems(self) -> list[str]:
        """Processes whose record says their findings could not be collected."""
        return [f"{r['label']}: {r['error']}" for r in self.records
                if "error" in r and "label" in r]


_RANK: dict[Status | None, int] = {"confirmed": 4, "could-not-evaluate": 3, "refuted": 2,
                                    "not-reached": 1, "runtime": 0, None: 0}


def _merged(found: Iterator[tuple[str, Diagnostic]] | list[tuple[str, Diagnostic]]
            ) -> list[Diagnostic]:
    by_place: dict[tuple, tuple[Diagnostic, set[str], list[Process]]] = {}
    for label, diagnostic in found:
        key = (diagnostic.code, diagnostic.filename, diagnostic.cell, diagnostic.location)
        _, labels, processes = by_place.setdefault(key, (diagnostic, set(), []))
        labels.add(label)
        if diagnostic.evidence is not None:
            processes += diagnostic.evidence.processes
    # The first process's drawing stands for all of them; the evidence names every process.
    return sorted((replace(d, processes=tuple(sorted(labels, key=_natural)), evidence=replace(
        d.evidence, processes=tuple(dict.fromkeys(processes))) if d.evidence else None)
                   for d, labels, processes in by_place.values()), key=lambda d: d.sort_key)


def _natural(label: str) -> tuple:
    """"rank 2" before "rank 10"; "main" first."""
    return (label != "main", [int(part) if part.isdigit() else part
                              for part in re.split(r"(\d+)", label)])


# --- running ----------------------------------------------------------------------------------


def launch(program: Program, options: Options = Options()) -> Run:
    """Run ``program`` traced, in a fresh interpreter; wait for it and gather the records."""
    sweep(tempfile.gettempdir())
    run = tempfile.mkdtemp(prefix=_RUN_PREFIX)
    try:
        settings = {"follow_children": options.follow_children, "confirm": options.confirm,
                    "deep": options.deep, "launcher": os.getpid()}
        with open(os.path.join(run, SETTINGS), "w", encoding="utf-8") as file:
            json.dump(settings, file)
        env = dict(os.environ)
        env[ENV_RUN] = run
        env[ENV_ROLE] = f"{'agent' if options.nproc_per_node else 'main'}:{os.getpid()}"
        env["PYTHONPATH"] = os.pathsep.join(
            [STARTUP, *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])])
        status = _run(_command(program, options, run), env)
        records = _read_records(os.path.join(run, RECORDS))
        if status == 1 and any(r.get("interrupted") for r in records):
            status = 128 + signal.SIGINT  # as the shell reports a program Ctrl-C ended
        return Run(status, records)
    finally:
        shutil.rmtree(run, ignore_errors=True)


def sweep(directory: str) -> None:
    """Remove the directories of runs whose aliaslint was killed (``kill -9`` leaves no
    chance to clean up; the program itself ends with it)."""
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if name.startswith(_MEETING_PREFIX):
            # The meeting place of the ranks of a torchrun agent that is gone.
            uid, _, rest = name[len(_MEETING_PREFIX):].partition("-")
            agent = rest.partition("-")[0]
            if uid == str(os.getuid()) and agent.isdigit() and not _alive(int(agent)):
                shutil.rmtree(os.path.join(directory, name), ignore_errors=True)
            continue
        if not name.startswith(_RUN_PREFIX):
            continue
        run = os.path.join(directory, name)
        try:
            if os.stat(run).st_uid != os.getuid():
                continue
            with open(os.path.join(run, SETTINGS), encoding="utf-8") as file:
                os.kill(int(json.load(file)["launcher"]), 0)
        except ProcessLookupError:
            shutil.rmtree(run, ignore_errors=True)
        except (OSError, ValueError, KeyError, TypeError):
            continue  # being set up, or not ours to judge


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        pass
    return True


def _command(program: Program, options: Options, run: str) -> list[str]:
    flags = _interpreter_flags()
    target = ["-m", program.target] if program.module else [program.target]
    if options.nproc_per_node is None:
        return [sys.executable, *flags, *target, *program.args]
    # --standalone: a rendezvous on localhost at a free port; torchrun's logs stay in the
    # run's directory, which goes when the run does.
    return [sys.executable, *flags, "-m", "torch.distributed.run", "--standalone",
            "--nproc-per-node", str(options.nproc_per_node), "--monitor-interval", "0.1",
            "--log-dir", os.path.join(run, "torchrun"), *target, *program.args]


def _interpreter_flags() -> list[str]:
    """The options this interpreter was started with (``python -X dev -m aliaslint trace``),
    for the program's: the ones given on the command line only, so ``sys.orig_argv`` gains
    nothing that the environment the program inherits already says (``-B`` for
    ``PYTHONDONTWRITEBYTECODE``), and none that would keep the hook from running."""
    words, _ = interpreter_options(list(getattr(sys, "orig_argv", ())[1:]))
    flags: list[str] = []
    takes_value = False
    for word in words:
        if takes_value or word not in _HOOK_BLOCKERS:
            flags.append(word)
        takes_value = not takes_value and word in ("-W", "-X", "--check-hash-based-pycs")
    return flags


def _run(command: list[str], env: dict[str, str]) -> int:
    """Run ``command`` on this process's standard streams (through pipes when one of them
    is not a file, as under pytest's capsys), forwarding signals; its exit status."""
    streams: list[Any] = []
    relays: list[tuple[IO[bytes], Any]] = []
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
        descriptor = _descriptor(stream)
        streams.append(descriptor if descriptor is not None else subprocess.PIPE)
    stdin = _descriptor(sys.stdin)
    with _forwarding_signals() as forward:
        process = subprocess.Popen(command, env=env, stdin=stdin, stdout=streams[0],
                                   stderr=streams[1])
        forward.append(process)
        threads = []
        for pipe, stream in ((process.stdout, sys.stdout), (process.stderr, sys.stderr)):
            if pipe is not None:
                relays.append((pipe, stream))
                threads.append(threading.Thread(target=_relay, args=(pipe, stream), daemon=True))
                threads[-1].start()
        returncode = process.wait()
        for thread in threads:
            thread.join()
    return 128 - returncode if returncode < 0 else returncode


def _descriptor(stream: Any) -> int | None:
    try:
        return int(stream.fileno())
    except (AttributeError, OSError, ValueError):
        return None


def _relay(pipe: IO[bytes], stream: Any) -> None:
    decoder = codecs.getincrementaldecoder(getattr(stream, "encoding", None) or "utf-8")(
        errors="replace")
    with pipe:
        for chunk in iter(lambda: pipe.read1(65536), b""):  # type: ignore[attr-defined]
            stream.write(decoder.decode(chunk))
            stream.flush()
        stream.write(decoder.decode(b"", final=True))


@contextlib.contextmanager
def _forwarding_signals() -> Iterator[list[subprocess.Popen]]:
    """While the program runs, aliaslint passes on the signals sent to it and outlives Ctrl-C
    (the program gets it from the terminal, and aliaslint still has a report to write).
    A handler, not SIG_IGN: an ignored signal would stay ignored in the program."""
    processes: list[subprocess.Popen] = []

    def forward(signum: int, _frame: object) -> None:
        for process in processes:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signum)

    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        previous[signal.SIGINT] = signal.signal(signal.SIGINT, lambda *_: None)
        for signum in _FORWARDED:
            previous[signum] = signal.signal(signum, forward)
    try:
        yield processes
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _read_records(directory: str) -> list[dict[str, Any]]:
    records = []
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    for name in names:
        if name.startswith(".") or not name.endswith(".json"):
            continue  # a process that died while writing
        try:
            with open(os.path.join(directory, name), encoding="utf-8") as file:
                records.append(json.load(file))
        except (OSError, ValueError):
            continue
    return records


# --- torchrun ... -m aliaslint trace: one report per node -------------------------------------


def torchrun_rank() -> tuple[int, int] | None:
    """(local rank, ranks on this node) when this process is a rank torchrun started."""
    try:
        if "TORCHELASTIC_RUN_ID" in os.environ:
            return int(os.environ["LOCAL_RANK"]), int(os.environ["LOCAL_WORLD_SIZE"])
    except (KeyError, ValueError):
        pass
    return None


def share_with_node(run: Run, local_rank: int, local_ranks: int) -> Run | None:
    """Leave this rank's run for the node's merge; the merged run of every rank of the node
    if this one finished last (it reports for all of them), else None.

    The ranks of one torchrun agent share its pid as their parent: that, the user and the
    restart count name the place they meet, so two jobs never mix.
    """
    meeting = os.path.join(
        tempfile.gettempdir(), f"{_MEETING_PREFIX}{os.getuid()}-{os.getppid()}-"
        f"{os.environ.get('TORCHELASTIC_RESTART_COUNT', '0')}")
    os.makedirs(meeting, mode=0o700, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=".rank-", dir=meeting)
    with os.fdopen(handle, "w", encoding="utf-8") as file:
        json.dump({"exit_status": run.exit_status, "records": run.records}, file)
    os.replace(temporary, os.path.join(meeting, f"rank-{local_rank}.json"))
    ranks = [name for name in os.listdir(meeting) if name.startswith("rank-")]
    if len(ranks) < local_ranks:
        return None
    try:
        os.mkdir(os.path.join(meeting, "merging"))  # one of the ranks that saw them all
    except FileExistsError:
        return None
    merged = Run(0)
    try:
        for name in sorted(ranks, key=_natural):
            with open(os.path.join(meeting, name), encoding="utf-8") as file:
                data = json.load(file)
            merged.exit_status = merged.exit_status or int(data["exit_status"])
            merged.records += data["records"]
    finally:
        shutil.rmtree(meeting, ignore_errors=True)
    return merged
