"""`python -m aliaslint` imports its dependencies, never the checked project's modules of the
same name; as a library, aliaslint leaves the importing program's `sys.path` alone."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HAZARD = ("import torch\n"
          "w = torch.randn(3, requires_grad=True)\n"
          "y = w.sigmoid()\n"
          "y.mul_(2)\n"
          "y.sum().backward()\n")
# Modules aliaslint imports (a dependency, another, and one of the standard library).
SHADOWS = ("libcst", "pathspec", "tomllib")


@pytest.fixture
def shadowing_project(tmp_path):
    for name in SHADOWS:
        (tmp_path / f"{name}.py").write_text(
            f"raise SystemExit('the project\\'s {name}.py was imported')\n")
    (tmp_path / "x.py").write_text(HAZARD)
    return tmp_path


def _python(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("options", [["-m", "aliaslint"], ["-Bm", "aliaslint"],
                                     ["-m", "aliaslint.__main__"]])
def test_python_m_aliaslint_imports_its_own_dependencies(shadowing_project, options):
    done = _python(shadowing_project, *options, "check", "x.py", "--no-cache",
                   "--output-format", "concise")
    assert "was imported" not in done.stderr + done.stdout
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        "x.py:4:1: AL101 `y.mul_(2)` overwrites `y`, saved for backward by `w.sigmoid()`; "
        "`y.sum().backward()` at line 5 will raise",
        "Found 1 finding in 1 of 1 file."]


def test_a_program_that_imports_aliaslint_keeps_its_sys_path(shadowing_project):
    # A package run with -m from the working directory, and a -c program: both find their
    # own modules there after importing aliaslint.
    package = shadowing_project / "tool"
    package.mkdir()
    (package / "__init__.py").write_text("import aliaslint\n")
    (package / "__main__.py").write_text("import sys, x_helper\nprint(sys.path[0])\n")
    (shadowing_project / "x_helper.py").write_text("")
    done = _python(shadowing_project, "-m", "tool")
    assert (done.returncode, done.stdout) == (0, f"{shadowing_project}\n"), done.stderr
    done = _python(shadowing_project, "-c", "import aliaslint, sys, x_helper; print(sys.path[:1])")
    assert (done.returncode, done.stdout) == (0, "['']\n"), done.stderr


def _guard(monkeypatch, cwd: Path, path: list[str], orig_argv: list[str]) -> list[str]:
    """sys.path after the guard, in a process started as ``orig_argv`` from ``cwd``."""
    from aliaslint import interpreter

    monkeypatch.chdir(cwd)
    monkeypatch.setattr(interpreter, "_guarded", False)
    monkeypatch.setattr(sys, "argv", ["-m"])  # as while -m locates the module
    monkeypatch.setattr(sys, "orig_argv", orig_argv)
    monkeypatch.setattr(sys, "path", list(path))
    if interpreter.run_as_module():
        interpreter.guard_as_main()
    return sys.path


def test_pythonpath_entries_are_kept(monkeypatch, shadowing_project, tmp_path_factory):
    extra = str(tmp_path_factory.mktemp("extra"))
    here = str(shadowing_project)
    python = [sys.executable, "-m", "aliaslint", "check"]
    assert _guard(monkeypatch, shadowing_project, [here, str(ROOT), extra], python) == [
        str(ROOT), extra]
    # The working directory named in PYTHONPATH as well: that entry is the user's.
    assert _guard(monkeypatch, shadowing_project, [here, here, str(ROOT)], python) == [
        here, str(ROOT)]


def test_the_checkout_that_holds_aliaslint_is_kept(monkeypatch):
    python = [sys.executable, "-m", "aliaslint"]
    assert _guard(monkeypatch, ROOT, [str(ROOT), "/elsewhere"], python) == [
        str(ROOT), "/elsewhere"]


def test_only_python_m_aliaslint_is_guarded(monkeypatch, shadowing_project):
    here = str(shadowing_project)
    # pytest loading the plugin (`python -m pytest`), a tool of the project, -c, a script.
    for orig_argv in ([sys.executable, "-m", "pytest"], [sys.executable, "-m", "tool"],
                      [sys.executable, "-c", "-m"],
                      [sys.executable, "script.py", "-m", "aliaslint"]):
        assert _guard(monkeypatch, shadowing_project, [here, "/lib"], orig_argv) == [
            here, "/lib"]


TRACED = HAZARD.replace("y.sum().backward()\n",
                        "try:\n    y.sum().backward()\nexcept RuntimeError:\n    pass\n")


@pytest.mark.slow
@pytest.mark.parametrize("command", [["trace"], ["check", "--trace"]])
def test_a_traced_program_s_directory_does_not_stand_in_for_aliaslint_s_imports(
        shadowing_project, command):
    pytest.importorskip("torch")
    (shadowing_project / "x.py").write_text(TRACED)
    done = _python(shadowing_project, "-m", "aliaslint", *command, "--output-format", "concise",
                   "x.py")
    assert "was imported" not in done.stderr + done.stdout
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines()[0].startswith("x.py:4:1: AL101 ")
