"""Paths that cannot be searched, and streams: a result for each, and the rest still checked.

Permissions mean nothing to root, so as root these tests drop to `nobody` in a forked child
(the code is already loaded: the child reads only the project) and skip, saying why, where
that is not possible.
"""

import io
import json
import os
import subprocess
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from aliaslint import check_source, registry
from aliaslint.cli import main

BAD = "import torch\na = torch.ones(2)\nprint(id(a) == id(a))\n"


def run_unprivileged(cwd: Path, *args: str) -> tuple[int, list[dict], str]:
    """`aliaslint check ARGS --output-format json` in ``cwd``, as a user permissions bind."""
    argv = ["check", *args, "--output-format", "json", "--no-cache", "--jobs", "1"]
    check_source(BAD, "warm.py")  # load every rule before the fork
    # And what a run loads on first use (the rules, a worker's start): the interpreter's own
    # library may be where the unprivileged user cannot read it.
    import ctypes  # noqa: F401
    import multiprocessing.popen_fork  # noqa: F401

    registry.rules()
    if os.geteuid() != 0:
        return _run(cwd, argv)
    import pwd

    nobody = pwd.getpwnam("nobody")
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            os.close(read)
            os.setgroups([])
            os.setgid(nobody.pw_gid)
            os.setuid(nobody.pw_uid)
            payload = {"result": _run(cwd, argv)}
        except BaseException as error:  # noqa: BLE001  (reported to the parent)
            payload = {"error": f"{type(error).__name__}: {error}"}
        os.write(write, json.dumps(payload).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    payload = json.loads(data or b'{"error": "the child wrote nothing"}')
    if "error" in payload:
        pytest.skip(f"running as root and cannot drop privileges to nobody: {payload['error']}")
    code, findings, err = payload["result"]
    return code, findings, err


def _run(cwd: Path, argv: list[str]) -> tuple[int, list[dict], str]:
    out, err = io.StringIO(), io.StringIO()
    previous = os.getcwd()
    os.chdir(cwd)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            code = main(argv)
    finally:
        os.chdir(previous)
    return code, json.loads(out.getvalue() or "[]"), err.getvalue()


@pytest.fixture
def shared_project():
    """A project directory every user may read (pytest's own tmp_path is private to root)."""
    directory = Path(tempfile.mkdtemp(prefix="aliaslint-perm-"))
    directory.chmod(0o755)
    (directory / "ok.py").write_text(BAD)
    locked = directory / "sub" / "locked"
    locked.mkdir(parents=True)
    (locked / "hidden.py").write_text(BAD)
    for folder in (directory / "sub",):
        folder.chmod(0o755)
    locked.chmod(0)
    yield directory
    locked.chmod(0o755)
    subprocess.run(["rm", "-rf", str(directory)], check=False)


def summary(findings: list[dict]) -> list[tuple]:
    return [(f["filename"], f["location"]["row"], f["code"], f["message"][:60])
            for f in findings]


def test_an_unsearchable_directory_named_on_the_command_line(shared_project):
    code, findings, err = run_unprivileged(shared_project, "sub/locked", "ok.py")
    assert (code, err) == (2, "")
    assert summary(findings) == [
        ("ok.py", 3, "AL401", findings[0]["message"][:60]),
        ("sub/locked", 0, "AL902", "cannot read directory: Permission denied"),
    ]


def test_an_unsearchable_directory_met_by_the_walk(shared_project):
    code, findings, _ = run_unprivileged(shared_project, ".")
    assert code == 2
    assert [(name, code) for name, _, code, _ in summary(findings)] == [
        ("ok.py", "AL401"), ("sub/locked", "AL902")]
    assert findings[1]["message"] == "cannot read directory: Permission denied"


def test_a_file_inside_an_unsearchable_directory(shared_project):
    code, findings, _ = run_unprivileged(shared_project, "sub/locked/hidden.py", "ok.py")
    assert code == 2
    assert summary(findings)[1] == (
        "sub/locked/hidden.py", 0, "AL902", "cannot access: Permission denied")


# --- streams ----------------------------------------------------------------------------------

@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_named_on_the_command_line_is_read_as_a_stream(project, capsys):
    fifo = project / "pipe"
    os.mkfifo(fifo)
    writer = subprocess.Popen([sys.executable, "-c",
                               f"open({str(fifo)!r}, 'w').write({BAD!r})"])
    try:
        code = main(["check", "pipe", "--output-format", "concise", "--jobs", "1"])
    finally:
        writer.wait(timeout=30)
    out = capsys.readouterr().out
    assert code == 1 and out.startswith("pipe:3:7: AL401 ")
    # the cache never answers for a stream by its size and modification time
    writer = subprocess.Popen([sys.executable, "-c",
                               f"open({str(fifo)!r}, 'w').write('import torch\\n')"])
    try:
        assert main(["check", "pipe", "--jobs", "1"]) == 0
    finally:
        writer.wait(timeout=30)


@pytest.mark.skipif(not Path("/bin/bash").exists(), reason="needs bash")
def test_process_substitution(project):
    (project / "m.py").write_text(BAD)
    result = subprocess.run(
        ["/bin/bash", "-c",
         f"{sys.executable} -m aliaslint check --output-format concise --no-cache <(cat m.py)"],
        cwd=project, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith("/dev/fd/") and ":3:7: AL401 " in result.stdout


# --- the worker pool --------------------------------------------------------------------------

def _children(pid: int) -> set[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return set()
    return {int(child) for child in text.split()}


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_killing_the_parent_ends_its_workers(project):
    import signal
    import time

    slow = "import torch\nc = a" + ".add(1)" * 600 + "\nprint(id(c) == id(c))\n"
    for index in range(24):
        (project / f"m{index:02}.py").write_text(slow)
    parent = subprocess.Popen([sys.executable, "-m", "aliaslint", "check", "-j", "2",
                               "--no-cache", "."], cwd=project,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: set[int] = set()
    deadline = time.monotonic() + 60
    while len(workers) < 2 and time.monotonic() < deadline and parent.poll() is None:
        workers = _children(parent.pid)
        time.sleep(0.05)
    assert len(workers) == 2, "the pool never started"
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 30
    while any(map(_alive, workers)) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [pid for pid in workers if _alive(pid)]
    for pid in left:  # do not leave them to the rest of the suite
        os.kill(pid, signal.SIGKILL)
    assert left == []
