import gc
import importlib.util
import json
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

from aliaslint import check_source
from aliaslint import registry


def pytest_collection_finish(session):
    """Load the rule tables before the first test.  An in-process check forks its worker
    (``-j 1`` too): a worker forked before they are loaded loads them again, once per check."""
    from aliaslint import checking  # noqa: F401

    registry.rules()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """What the test process holds so far is put out of the collector's sight, as the engine
    does in its workers.  A worker forked by an in-process check collects after each file,
    and would otherwise walk the whole of this process (torch, every collected test) each
    time.  Garbage goes first, so none of it is kept; what a test makes is still collected."""
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def _one_group_test_at_a_time(request):
    """Tests of one `xdist_group` (one mypy cache, one shared report) run one at a time
    across the worker processes, under a lock file per group: whichever workers the
    scheduler gives them, they never overlap."""
    mark = request.node.get_closest_marker("xdist_group")
    if mark is None or sys.platform == "win32":
        yield
        return
    import fcntl

    name = mark.args[0] if mark.args else mark.kwargs.get("name", "group")
    lock = Path(tempfile.gettempdir()) / f"aliaslint-tests-{name}.lock"
    with open(lock, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def lint(source: str, rules=None) -> list[tuple[int, str]]:
    """(row, code) of each finding in ``source`` (dedented), with every rule that has a check."""
    if rules is None:
        rules = {code for code, rule in registry.rules().items() if rule.checks}
    diagnostics = check_source(textwrap.dedent(source), "example.py", rules)
    return [(d.location.row, d.code) for d in diagnostics]


def benchmark_script(name: str) -> ModuleType:
    """A script of benchmarks/ (not a package), imported as a module of that name."""
    path = Path(__file__).resolve().parent.parent / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the script runs
    spec.loader.exec_module(module)
    return module


class TorchPython:
    """`python SCRIPT` for programs that import torch, from one interpreter that imported it
    once (tests/data/run_programs.py), started at the first program.  A program that ends
    that interpreter (a crash, `os._exit`) is run again in one of its own, and the next
    program gets a new one."""

    RUNNER = Path(__file__).resolve().parent / "data" / "run_programs.py"

    def __init__(self) -> None:
        self.process: subprocess.Popen | None = None

    def run(self, home: Path, script: str) -> subprocess.CompletedProcess:
        """How ``script`` ends when run as `python SCRIPT` with ``home`` as the working
        directory."""
        if self.process is None or self.process.poll() is not None:
            self.process = subprocess.Popen([sys.executable, str(self.RUNNER)], text=True,
                                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=subprocess.DEVNULL)
        assert self.process.stdin is not None and self.process.stdout is not None
        try:
            self.process.stdin.write(json.dumps([str(home), script]) + "\n")
            self.process.stdin.flush()
            answer = self.process.stdout.readline()
        except BrokenPipeError:
            answer = ""
        if not answer:
            self.close()
            return subprocess.run([sys.executable, script], cwd=home, capture_output=True,
                                  text=True, timeout=120)
        outcome = json.loads(answer)
        return subprocess.CompletedProcess([sys.executable, script], outcome["returncode"],
                                           outcome["stdout"], outcome["stderr"])

    def close(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None


@pytest.fixture(scope="session")
def torch_python():
    """One `TorchPython` per test process."""
    runner = TorchPython()
    yield runner
    runner.close()


@pytest.fixture
def short_tmp():
    """A new empty directory with a short path, removed afterwards.  multiprocessing and torch
    make AF_UNIX sockets in TMPDIR, and a socket's path has at most 107 bytes: tmp_path, under
    a pytest-xdist worker's directory, leaves too few of them."""
    path = Path(tempfile.mkdtemp(prefix="t"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A temporary project directory that is also the working directory."""
    monkeypatch.chdir(tmp_path)
    return tmp_path
