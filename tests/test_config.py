"""Configuration as ruff users know it: `extend`, per-file-ignores on the command line,
--show-settings, and a directory walk with gitignore semantics."""

import io
import subprocess
from pathlib import Path

import pytest

from aliaslint import walk as walk_module
from aliaslint.cli import main
from aliaslint.progress import ProgressLine

# One AL401 (line 3) and one AL404 (line 4).
BOTH = ("import torch\na = torch.zeros(3)\nprint(id(a) == id(a[1:]))\n"
        "print(a.storage())\n")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def check(capsys, *args: str) -> tuple[int, list[str], str]:
    """Exit code, the concise findings as `path:CODE`, and standard error."""
    code = main(["check", "--no-cache", "--output-format", "concise", "-q", *args])
    out, err = capsys.readouterr()
    findings = [f"{line.split(':')[0]}:{line.split()[1]}" for line in out.splitlines()]
    return code, findings, err


def shown(capsys, *args: str) -> list[str]:
    code = main(["check", "--show-files", *args])
    out, _ = capsys.readouterr()
    assert code == 0
    return [line.split()[0] for line in out.splitlines()]


# --- extend ---------------------------------------------------------------------------------


def test_extend_inherits_and_a_nearer_file_overrides(project, capsys):
    write(project / "base.toml", 'ignore = ["AL404"]\nconfidence = "high"\n'
          'extend-exclude = ["generated"]\nper-file-ignores = { "tests/*" = ["AL401"] }\n')
    write(project / "pkg" / "pyproject.toml",
          '[tool.aliaslint]\nextend = "../base.toml"\nextend-exclude = ["old"]\n')
    for name in ("pkg/m.py", "pkg/old/o.py", "pkg/generated/g.py", "tests/t.py",
                 "pkg/tests/t.py"):
        write(project / name, BOTH)
    code, findings, _ = check(capsys, "pkg")
    # AL404 is ignored by the base; both files' extend-exclude apply; the base's
    # per-file-ignores pattern is relative to the base, so pkg/tests/t.py keeps its AL401.
    assert findings == ["pkg/m.py:AL401", "pkg/tests/t.py:AL401"]
    assert code == 1


def test_extend_selection_layers_and_chains(project, capsys):
    write(project / "a.toml", 'select = ["AL4"]\n')
    write(project / "b.toml", 'extend = "a.toml"\nignore = ["AL401"]\n')
    write(project / "sub" / "aliaslint.toml", 'extend = "../b.toml"\nextend-select = ["AL201"]\n')
    write(project / "sub" / "m.py", BOTH)
    assert check(capsys, "sub")[1] == ["sub/m.py:AL404"]
    out = main(["check", "--show-settings", "sub/m.py"]), capsys.readouterr()[0]
    assert "Settings path: sub/aliaslint.toml\nExtends: b.toml\nExtends: a.toml\n" in out[1]
    assert 'rules = ["AL201", "AL402", "AL403", "AL404", "AL902", "AL903"]' in out[1]


@pytest.mark.parametrize(("files", "message"), [
    ({"aliaslint.toml": 'extend = "aliaslint.toml"\n'}, "extend each other in a cycle"),
    ({"aliaslint.toml": 'extend = "x/b.toml"\n', "x/b.toml": 'extend = "../aliaslint.toml"\n'},
     "extend each other in a cycle"),
    ({"aliaslint.toml": 'extend = "missing.toml"\n'}, "'missing.toml': config file not found"),
    ({"aliaslint.toml": "extend = 3\n"}, "extend: expected the path of a config file"),
    ({"aliaslint.toml": 'extend = "b.toml"\n', "b.toml": "selct = []\n"},
     "b.toml: option unknown key 'selct' (did you mean 'select'?)"),
])
def test_extend_errors_are_clear(project, capsys, files, message):
    for name, text in files.items():
        write(project / name, text)
    write(project / "m.py", BOTH)
    code, _, err = check(capsys)
    assert code == 2 and message in err and "Traceback" not in err
    if "cycle" in message:
        assert err.count("->") >= 1


# --- the command line -----------------------------------------------------------------------


def test_extend_ignore_and_per_file_ignores_on_the_command_line(project, capsys):
    write(project / "pyproject.toml",
          '[tool.aliaslint]\nper-file-ignores = { "tests/*" = ["AL404"] }\n')
    write(project / "tests" / "t.py", BOTH)
    write(project / "src" / "s.py", BOTH)
    assert check(capsys)[1] == ["src/s.py:AL401", "src/s.py:AL404", "tests/t.py:AL401"]
    assert check(capsys, "--ignore", "AL401", "--extend-ignore", "AL404")[1] == []
    # Replaces the configured table: tests/ gets its AL404 back.
    assert check(capsys, "--per-file-ignores", "src/*:AL401,AL404")[1] == [
        "tests/t.py:AL401", "tests/t.py:AL404"]
    assert check(capsys, "--extend-per-file-ignores", "src/*:AL401",
                 "--extend-per-file-ignores", "*.py:AL401")[1] == ["src/s.py:AL404"]
    code, _, err = check(capsys, "--per-file-ignores", "AL401")
    assert code == 2 and "expected PATTERN:CODES" in err
    code, _, err = check(capsys, "--per-file-ignores", "x:AL99")
    assert code == 2 and "unknown rule selector 'AL99'" in err


def test_patterns_follow_gitignore_rules(project, capsys):
    write(project / "pyproject.toml", '[tool.aliaslint]\nextend-exclude = '
          '["src/*.py", "!src/keep.py", "/top.py", "data/"]\n')
    for name in ("src/a.py", "src/keep.py", "src/deep/b.py", "top.py", "x/top.py",
                 "data/d.py", "x/data/d.py", "data.py"):
        write(project / name, BOTH)
    # `*` stays within a directory, `!` re-includes, a leading `/` anchors at the config's
    # directory, a trailing `/` matches only directories.
    assert shown(capsys) == ["data.py", "src/deep/b.py", "src/keep.py", "x/top.py"]


def test_a_project_inside_a_directory_named_like_an_exclude(tmp_path, monkeypatch, capsys):
    project = tmp_path / "build" / "proj"
    write(project / "m.py", BOTH)
    write(project / "dist" / "skipped.py", BOTH)
    monkeypatch.chdir(project)
    assert shown(capsys) == ["m.py"]
    assert shown(capsys, "--force-exclude", "m.py") == ["m.py"]


def test_named_excluded_directory_is_walked(project, capsys):
    write(project / "build" / "b.py", BOTH)
    write(project / "build" / "dist" / "c.py", BOTH)
    assert shown(capsys) == []
    assert shown(capsys, "build") == ["build/b.py"]


# --- gitignore ------------------------------------------------------------------------------


@pytest.fixture
def repository(project, monkeypatch):
    """The project as a git repository (a `.git` directory is enough), with no global
    excludes file of the user's."""
    (project / ".git" / "info").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(project / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(project / "home" / ".config"))
    walk_module._global_excludes_file.cache_clear()
    yield project
    walk_module._global_excludes_file.cache_clear()


def test_walk_follows_gitignore_files(repository, capsys):
    write(repository / ".gitignore", "generated/\n*_pb2.py\n!keep_pb2.py\n# a comment\n")
    write(repository / "pkg" / ".gitignore", "local.py\n/only_here.py\n")
    write(repository / ".git" / "info" / "exclude", "scratch.py\n")
    for name in ("m.py", "generated/g.py", "pkg/generated/g.py", "x_pb2.py", "keep_pb2.py",
                 "pkg/local.py", "local.py", "pkg/only_here.py", "pkg/sub/only_here.py",
                 "scratch.py", "pkg/scratch.py", "pkg/m.py"):
        write(repository / name, BOTH)
    assert shown(capsys) == ["keep_pb2.py", "local.py", "m.py", "pkg/m.py",
                             "pkg/sub/only_here.py"]
    # The .gitignore files above a directory named on the command line count too.
    assert shown(capsys, "pkg") == ["pkg/m.py", "pkg/sub/only_here.py"]
    # A file named on the command line is checked whatever ignores it.
    assert shown(capsys, "scratch.py") == ["scratch.py"]
    assert shown(capsys, "--no-respect-gitignore") == sorted(
        ["m.py", "generated/g.py", "pkg/generated/g.py", "x_pb2.py", "keep_pb2.py",
         "pkg/local.py", "local.py", "pkg/only_here.py", "pkg/sub/only_here.py", "scratch.py",
         "pkg/scratch.py", "pkg/m.py"])
    write(repository / "pyproject.toml", "[tool.aliaslint]\nrespect-gitignore = false\n")
    assert len(shown(capsys)) == 12
    assert len(shown(capsys, "--respect-gitignore")) == 5


def test_a_deeper_gitignore_overrides_and_an_ignored_directory_stays_ignored(repository,
                                                                            capsys):
    write(repository / ".gitignore", "*.py\n!pkg/\nvendor/\n")
    write(repository / "pkg" / ".gitignore", "!*.py\n")
    write(repository / "vendor" / ".gitignore", "!*.py\n")
    for name in ("top.py", "pkg/m.py", "vendor/v.py"):
        write(repository / name, BOTH)
    assert shown(capsys) == ["pkg/m.py"]


def test_gitignore_outside_a_repository_and_global_excludes(project, capsys, monkeypatch):
    write(project / ".gitignore", "ignored.py\n")
    write(project / "ignored.py", BOTH)
    assert shown(capsys) == ["ignored.py"]  # not a repository: git would not read it
    (project / ".git").mkdir()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(project / "xdg"))
    monkeypatch.setenv("HOME", str(project / "home"))
    write(project / "home" / ".gitconfig", '[user]\n\tname = x\n[core]\n\texcludesFile = '
          f'"{project / "global-ignore"}"\n')
    write(project / "global-ignore", "personal.py\n")
    write(project / "personal.py", BOTH)
    walk_module._global_excludes_file.cache_clear()
    try:
        assert shown(capsys) == []
    finally:
        walk_module._global_excludes_file.cache_clear()


def test_a_real_git_repository_agrees_with_git(repository, capsys):
    """The walk and `git ls-files --others --exclude-standard` agree on a tricky tree."""
    (repository / ".git").rename(repository / "unused-git")
    git = ["git", "-c", "core.excludesFile=/dev/null", "-C", str(repository)]
    try:
        subprocess.run([*git, "init", "-q"], check=True)
    except (OSError, subprocess.CalledProcessError) as error:
        pytest.skip(f"git is not available: {error}")
    write(repository / ".gitignore", "/build_*/\nlogs\n**/cache/*.py\n!**/cache/keep.py\n"
          "a/**/z.py\n[Tt]mp*.py\n\\#hash.py\n")
    write(repository / "a" / "b" / ".gitignore", "*.py\n!y.py\n")
    names = ["build_x/m.py", "sub/build_x/m.py", "logs/l.py", "q/logs", "cache/c.py",
             "cache/keep.py", "deep/cache/c.py", "a/z.py", "a/q/r/z.py", "Tmp1.py", "tmp2.py",
             "#hash.py", "a/b/x.py", "a/b/y.py", "a/b/c/w.py", "ok.py"]
    for name in names:
        write(repository / name, BOTH)
    listed = subprocess.run([*git, "ls-files", "--others", "--exclude-standard"],
                            capture_output=True, text=True, check=True).stdout.split()
    expected = sorted(name for name in listed if name.endswith(".py"))
    assert shown(capsys, "--isolated") == expected


# --- -v and the progress line -----------------------------------------------------------------


def test_verbose_says_what_was_read_and_skipped(repository, capfd):
    # capfd: a file's notes are written by the worker process that checks it.
    write(repository / "base.toml", 'extend-exclude = ["old"]\n')
    write(repository / "pyproject.toml", '[tool.aliaslint]\nextend = "base.toml"\n')
    write(repository / ".gitignore", "gen.py\n")
    for name in ("m.py", "old/o.py", "gen.py"):
        write(repository / name, BOTH)
    assert main(["check", "-v", "--output-format", "concise"]) == 1
    err = capfd.readouterr().err
    assert f"aliaslint: config {repository / 'pyproject.toml'}, extending " \
           f"{repository / 'base.toml'}" in err
    assert f"aliaslint: skipped gen.py: ignored by {repository / '.gitignore'}:1" in err
    assert "aliaslint: skipped old/: excluded by " in err and "(pyproject.toml)" in err
    assert "aliaslint: skipped .git/: excluded by '.git' (pyproject.toml)" in err
    main(["check", "-v", "--output-format", "concise"])
    err = capfd.readouterr().err
    assert "aliaslint: cache hit m.py (same " in err
    main(["check", "--output-format", "concise"])
    assert capfd.readouterr().err == ""  # neither -v nor a terminal: nothing


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_line_only_on_a_terminal_and_only_for_long_runs():
    assert ProgressLine.for_terminal(io.StringIO()) is None
    assert ProgressLine.for_terminal(FakeTerminal()) is not None
    now = [0.0]
    terminal = FakeTerminal()
    line = ProgressLine(terminal, delay=1.0, clock=lambda: now[0])
    line(10, 100)
    line.close()
    assert terminal.getvalue() == ""  # a short run leaves no trace
    line = ProgressLine(terminal, delay=1.0, clock=lambda: now[0])
    now[0] = 2.0
    line(50, 100)
    now[0] = 2.01
    line(51, 100)  # too soon after the last redraw
    now[0] = 4.0
    line(100, 100)
    line.close()
    assert terminal.getvalue() == ("\r\x1b[K50/100 files checked (25 files/s)"
                                   "\r\x1b[K100/100 files checked (25 files/s)\r\x1b[K")


def test_directories_whose_names_are_pattern_syntax(tmp_path, monkeypatch, capsys):
    project = tmp_path / "runs[1]*" / "#proj!"
    write(project / "pyproject.toml", '[tool.aliaslint]\nper-file-ignores = '
          '{ "tests/*" = ["AL401"] }\nextend-exclude = ["old/*"]\n')
    write(project / "tests" / "t.py", BOTH)
    write(project / "old" / "o.py", BOTH)
    monkeypatch.chdir(project)
    assert check(capsys)[1] == ["tests/t.py:AL404"]


# --- config paths that are not regular files: said what they are, never read ------------------

def _aliaslint(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """The CLI in its own process: a read that blocks ends in the timeout, not in a hung run."""
    import os
    import sys

    root = Path(__file__).resolve().parent.parent
    return subprocess.run([sys.executable, "-m", "aliaslint", *args], cwd=cwd, timeout=60,
                          capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(root)})


@pytest.fixture
def special_files(project):
    write(project / "x.py", BOTH)
    (project / "folder.toml").mkdir()
    import os

    os.mkfifo(project / "pipe.toml")
    (project / "zero.toml").symlink_to("/dev/zero")
    return project


@pytest.mark.parametrize("name, what", [
    ("pipe.toml", "is not a regular file (a FIFO)"),
    ("folder.toml", "is a directory, not a config file"),
    ("zero.toml", "is not a regular file (a character device)"),
    ("/dev/zero", "is not a regular file (a character device)"),
    ("missing.toml", "config file not found"),
])
def test_a_config_path_that_is_not_a_regular_file(special_files, capsys, name, what):
    def run(*args: str) -> tuple[int, str, str]:
        if name == "pipe.toml":  # reading would wait for a writer: in a process of its own
            done = _aliaslint(special_files, *args)
            return done.returncode, done.stdout, done.stderr
        code = main(list(args))
        return (code, *capsys.readouterr())

    for command in (["check", "x.py", "--no-cache"], ["clean"]):
        assert run(*command, "--config", name) == (2, "", f"aliaslint: error: {name}: {what}\n")
    write(special_files / "aliaslint.toml", f'extend = "{name}"\n')
    assert run("check", "x.py", "--no-cache") == (
        2, "", f"aliaslint: error: {special_files / 'aliaslint.toml'}: extend: {name!r}: {what}\n")


def test_a_fifo_where_the_config_is_looked_for_is_passed_over(special_files):
    import os

    os.mkfifo(special_files / "pyproject.toml")
    done = _aliaslint(special_files, "check", "x.py", "--no-cache", "--output-format", "concise")
    assert (done.returncode, done.stderr) == (1, "")
    assert done.stdout.splitlines()[-1] == "Found 2 findings in 1 of 1 file."


def test_a_config_replaced_by_a_fifo_after_its_check_is_not_read(special_files):
    from aliaslint.config import ConfigError, _read_toml

    with pytest.raises(ConfigError, match="pipe.toml: is not a regular file \\(a FIFO\\)"):
        _read_toml(special_files / "pipe.toml")
