"""The traced program runs in a fresh interpreter: what it sees is what `python script.py` gives.

Each test runs the same program plainly and under `aliaslint trace` and compares.  Every job
runs in a session of its own, so a test that times out kills all of it.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from aliaslint.runtime.launch import sweep

pytest.importorskip("torch")

ALIASLINT = [sys.executable, "-m", "aliaslint"]


def run(argv: list[str], cwd: Path, *, timeout: float = 120, input: str | None = None,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    process = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True,
                               env={**os.environ, **(env or {})})
    try:
        out, err = process.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise
    return subprocess.CompletedProcess(argv, process.returncode, out, err)


@pytest.fixture
def tmp(tmp_path, short_tmp, monkeypatch):
    """The working directory, with a temporary directory of its own where aliaslint must
    leave nothing (torch keeps a cache of its own there)."""
    temporary = short_tmp
    monkeypatch.setenv("TMPDIR", str(temporary))
    yield tmp_path
    assert [p.name for p in temporary.iterdir() if p.name.startswith("aliaslint")] == []


PROBE = """\
import inspect, json, sys, os
import torch

frame = inspect.currentframe()
print(json.dumps({
    "__file__": __file__,
    "co_filename": frame.f_code.co_filename,
    "__builtins__": type(__builtins__).__name__,
    "__loader__": type(__loader__).__name__,
    "__package__": __package__,
    "__spec__": None if __spec__ is None else __spec__.name,
    "__name__": __name__,
    "stack": len(inspect.stack()),
    "argv": sys.argv,
    "path0": sys.path[0],
    "startup_on_path": any("startup" in p for p in sys.path),
}))
"""


def test_script_sees_what_a_plain_run_gives(tmp):
    (tmp / "sub").mkdir()
    (tmp / "sub" / "probe.py").write_text(PROBE)
    plain = run([sys.executable, "sub/probe.py", "a", "--b"], tmp)
    traced = run([*ALIASLINT, "trace", "sub/probe.py", "a", "--b"], tmp)
    assert plain.returncode == traced.returncode == 0, traced.stderr
    seen = json.loads(traced.stdout)
    assert seen == json.loads(plain.stdout)
    assert seen["__file__"] == str(tmp / "sub" / "probe.py")  # absolute, as CPython gives it
    assert (seen["__builtins__"], seen["__loader__"], seen["__package__"], seen["stack"]) == (
        "module", "SourceFileLoader", None, 1)


def test_module_sees_what_a_plain_run_gives(tmp):
    (tmp / "pkg").mkdir()
    (tmp / "pkg" / "__init__.py").write_text("")
    (tmp / "pkg" / "probe.py").write_text(PROBE)
    plain = run([sys.executable, "-m", "pkg.probe", "x"], tmp)
    traced = run([*ALIASLINT, "trace", "-m", "pkg.probe", "x"], tmp)
    assert plain.returncode == traced.returncode == 0, traced.stderr
    assert json.loads(traced.stdout) == json.loads(plain.stdout)
    assert json.loads(traced.stdout)["__package__"] == "pkg"


def test_check_trace_runs_the_program_as_python_does(tmp):
    (tmp / "probe.py").write_text(PROBE)
    plain = run([sys.executable, "probe.py"], tmp)
    confirmed = run([*ALIASLINT, "check", "--trace", "probe.py"], tmp)
    assert confirmed.returncode == 0, confirmed.stderr
    assert json.loads(confirmed.stdout) == json.loads(plain.stdout)


def test_a_script_that_changes_directory_still_finds_its_files(tmp):
    (tmp / "sub").mkdir()
    (tmp / "sub" / "data.txt").write_text("payload\n")
    (tmp / "sub" / "prog.py").write_text(textwrap.dedent("""\
        import os
        import torch
        here = os.path.dirname(__file__)
        os.chdir("/")
        print(open(os.path.join(here, "data.txt")).read(), end="")
    """))
    traced = run([*ALIASLINT, "trace", "sub/prog.py"], tmp)
    assert (traced.returncode, traced.stdout) == (0, "payload\n"), traced.stderr


def frames(stderr: str) -> list[str]:
    """The traceback's frame lines and its last line (the error), without the report."""
    lines = stderr.splitlines()
    start = lines.index("Traceback (most recent call last):")
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith(" "))
    return [line for line in lines[start:end] if line.startswith("  File ")] + [
        lines[end].split(" aliaslint: ")[0]]


@pytest.mark.parametrize("body", [
    # torch raises from inside an op the tracer sees
    "x = torch.ones(2, 3).t()\nx.view(-1)\n",
    # the tracer raises autograd's own error from its unpack hook
    "x = torch.ones(3, requires_grad=True)\ny = x.exp()\ny.add_(1)\ny.sum().backward()\n",
    # torch raises inside a call the tracer wraps to follow snapshots
    "m = torch.nn.Linear(2, 2)\nbest = m.state_dict()\nm.load_state_dict({'weight': best['weight']})\n",
])
def test_tracebacks_show_the_frames_of_a_plain_run(tmp, body):
    (tmp / "prog.py").write_text("import torch\n\n\ndef main():\n" + textwrap.indent(body, "    ")
                                 + "\n\nmain()\n")
    plain = run([sys.executable, "prog.py"], tmp)
    traced = run([*ALIASLINT, "trace", "prog.py"], tmp)
    assert plain.returncode == traced.returncode == 1
    assert frames(traced.stderr) == frames(plain.stderr)
    assert "aliaslint" not in "\n".join(frames(traced.stderr)[:-1])


def test_standard_streams_and_exit_status_pass_through(tmp):
    (tmp / "prog.py").write_text(textwrap.dedent("""\
        import sys
        import torch
        line = sys.stdin.readline()
        sys.stdout.write("got " + line)
        sys.stdout.buffer.write(b"\\xff\\x00raw\\n")
        sys.stderr.write("to stderr\\n")
        sys.exit(7)
    """))
    plain = subprocess.run([sys.executable, "prog.py"], cwd=tmp, input=b"hello\n",
                           capture_output=True, timeout=120)
    traced = subprocess.run([*ALIASLINT, "trace", "prog.py"], cwd=tmp, input=b"hello\n",
                            capture_output=True, timeout=120)
    assert traced.returncode == plain.returncode == 7
    assert traced.stdout == plain.stdout == b"got hello\n\xff\x00raw\n"
    assert traced.stderr.startswith(b"to stderr\n")


def test_the_users_sitecustomize_still_runs(tmp):
    (tmp / "site_dir").mkdir()
    (tmp / "site_dir" / "sitecustomize.py").write_text("import os\nos.environ['MARK'] = 'set'\n")
    (tmp / "prog.py").write_text("import os\nimport torch\nprint(os.environ.get('MARK'))\n")
    traced = run([*ALIASLINT, "trace", "prog.py"], tmp, env={"PYTHONPATH": str(tmp / "site_dir")})
    assert (traced.returncode, traced.stdout) == (0, "set\n"), traced.stderr


def wait_for(path: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


SLEEPER = """\
import pathlib, sys, time
import torch
x = torch.randn(3, requires_grad=True)
y = x.exp()
y.add_(1)
try:
    y.sum().backward()
except RuntimeError:
    pass
pathlib.Path("ready").touch()
try:
    time.sleep(60)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    raise
"""


def test_ctrl_c_reaches_the_program_and_the_report_still_comes(tmp):
    (tmp / "prog.py").write_text(SLEEPER)
    process = subprocess.Popen([*ALIASLINT, "trace", "--output-format", "concise", "prog.py"],
                               cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)
    try:
        wait_for(tmp / "ready")
        os.killpg(process.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
    assert out == "interrupted\n"
    assert "KeyboardInterrupt" in err
    assert "prog.py:5:1: AL101" in err
    assert process.returncode == 130


def test_sigterm_to_aliaslint_is_passed_on_to_the_program(tmp):
    (tmp / "prog.py").write_text(SLEEPER)
    process = subprocess.Popen([*ALIASLINT, "trace", "prog.py"], cwd=tmp,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        wait_for(tmp / "ready")
        process.terminate()
        process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
    assert process.returncode == 128 + signal.SIGTERM


def test_the_program_ends_when_aliaslint_is_killed(tmp):
    (tmp / "prog.py").write_text(textwrap.dedent("""\
        import os, pathlib, time
        import torch
        pathlib.Path("pid").write_text(str(os.getpid()))
        time.sleep(60)
    """))
    process = subprocess.Popen([*ALIASLINT, "trace", "prog.py"], cwd=tmp,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    try:
        wait_for(tmp / "pid")
        program = int((tmp / "pid").read_text())
        process.kill()
        process.wait(timeout=60)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                os.kill(program, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            pytest.fail("the program outlived aliaslint")
        # The killed run's directory goes at the next run.
        sweep(os.environ["TMPDIR"])
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)


# --- what the program can see of the tracer ---------------------------------------------------

SEES = """\
import json, os, subprocess, sys
import torch

child = subprocess.run([sys.executable, "-c", "import json, os; print(json.dumps(dict(os.environ)))"],
                       capture_output=True, text=True, check=True).stdout
print(json.dumps({
    "environ": dict(os.environ),
    "child environ": json.loads(child),
    "orig_argv": sys.orig_argv,
    "executable": sys.executable,
    "flags": repr(sys.flags),
    "warnoptions": sys.warnoptions,
    "xoptions": sys._xoptions,
    "path": sys.path,
}))
"""


# The quick run keeps the first: the same hand-over of the environment and command line.
@pytest.mark.parametrize("environment", [{}, pytest.param({"PYTHONDONTWRITEBYTECODE": "1",
                                                           "PYTHONPATH": "/nonexistent/site"},
                                                          marks=pytest.mark.slow)])
def test_the_program_sees_the_environment_and_command_line_of_a_plain_run(tmp, environment):
    (tmp / "sees.py").write_text(SEES)
    root = str(Path(__file__).resolve().parent.parent)
    # aliaslint is found through PYTHONPATH here; the program's PYTHONPATH is that one.
    env = {**environment, "PYTHONPATH": os.pathsep.join(
        [root, *([environment["PYTHONPATH"]] if "PYTHONPATH" in environment else [])])}
    plain = run([sys.executable, "sees.py", "arg"], tmp, env=env)
    traced = run([*ALIASLINT, "trace", "sees.py", "arg"], tmp, env=env)
    assert plain.returncode == traced.returncode == 0, traced.stderr
    seen, expected = json.loads(traced.stdout), json.loads(plain.stdout)
    assert seen == expected
    assert seen["orig_argv"] == [sys.executable, "sees.py", "arg"]  # no -B
    assert seen["environ"]["PYTHONPATH"] == env["PYTHONPATH"]


def test_interpreter_options_given_to_aliaslint_reach_the_program(tmp):
    (tmp / "sees.py").write_text(SEES)
    traced = run([sys.executable, "-X", "dev", "-Wignore::DeprecationWarning", "-m", "aliaslint",
                  "trace", "sees.py"], tmp)
    seen = json.loads(traced.stdout)
    assert seen["orig_argv"] == [sys.executable, "-X", "dev", "-W", "ignore::DeprecationWarning",
                                 "sees.py"]
    assert seen["xoptions"] == {"dev": True}


def test_children_of_the_program_are_still_traced_with_follow_children(tmp):
    (tmp / "parent.py").write_text(
        "import os, subprocess, sys\n"
        "code = 'import torch\\nx = torch.randn(3, requires_grad=True)\\ny = x.exp()\\n"
        "y.add_(1)\\ntry:\\n    y.sum().backward()\\nexcept RuntimeError:\\n    pass\\n'\n"
        "subprocess.run([sys.executable, '-c', code], check=True, env={**os.environ, 'X': '1'})\n")
    traced = run([*ALIASLINT, "trace", "--follow-children", "--output-format", "concise",
                  "parent.py"], tmp)
    assert traced.returncode == 1, traced.stderr
    assert traced.stderr.startswith("<string>:4:1: AL101 in-place `add_` writes a tensor")
    assert "(in process " in traced.stderr.splitlines()[0]


# --- a program that never started ---------------------------------------------------------------

# The quick run keeps a missing script and a missing module: the same watch for the
# program's first line and the same report, for a script and for `-m`.
@pytest.mark.parametrize("program, status, said", [
    (["missing.py"], 2, "can't open file"),
    pytest.param(["broken.py"], 1, "SyntaxError: '(' was never closed", marks=pytest.mark.slow),
    (["-m", "no_such_module"], 1, "No module named no_such_module"),
    pytest.param(["-m", "broken"], 1, "SyntaxError: '(' was never closed",
                 marks=pytest.mark.slow),
])
def test_a_program_that_never_started_is_not_reported_as_clean(tmp, program, status, said):
    (tmp / "broken.py").write_text("x = (\n")
    plain = run([sys.executable, *program], tmp)
    name = " ".join(program)
    for command in (["trace"], ["check", "--trace"]):
        traced = run([*ALIASLINT, *command, *program], tmp)
        assert traced.returncode == plain.returncode == status
        assert said in traced.stderr
        assert traced.stderr.splitlines()[-1] == (
            f"aliaslint {' '.join(command)}: the program `{name}` did not start "
            f"(exit status {status}); nothing was traced.")


@pytest.mark.parametrize("script", ["fails.py", "fails.pyc"])
def test_a_program_that_started_and_failed_is_reported_as_run(tmp, script):
    import py_compile

    (tmp / "fails.py").write_text("import torch\nraise SystemExit(3)\n")
    py_compile.compile(str(tmp / "fails.py"), cfile=str(tmp / "fails.pyc"))
    traced = run([*ALIASLINT, "trace", script], tmp)
    assert traced.returncode == 3
    assert traced.stderr.splitlines()[-1] == (
        "aliaslint trace: 0 runtime findings (no alias hazard was hit).")
