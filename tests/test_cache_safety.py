"""The cache never touches what is not its own, and never shows what the file does not hold.

The directory half runs the real command line in a git repository beside a sibling project,
and compares the whole tree before and after; the entry half forges entries in each way an
entry can be wrong and checks that the forged findings never reach the output.
"""

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from aliaslint import engine
from aliaslint.cache import _MADE, TAG_NAME, Cache, _checksum, _make_directory
from aliaslint.cli import main
from aliaslint.config import ConfigError
from test_cache import parsed  # noqa: F401  (the fixture: -j 1 parses in a worker too)

REPO = Path(__file__).resolve().parent.parent
MODEL = '''\
import torch
from torch import nn


class Gate(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.proj = nn.Linear(width, width)

    def forward(self, x):
        h = self.proj(x)
        y = h.sigmoid()
        y.mul_(2)  # sigmoid saved its output for backward
        return y
'''
NOTEBOOK = json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
    {"cell_type": "markdown", "metadata": {}, "source": ["# Gate"]},
    {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
     "source": ["import torch\n", "a = torch.zeros(3)\n", "print(id(a) == id(a[1:]))\n"]},
]})


def aliaslint(*args: str, cwd: Path, home: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    if home is not None:
        env["HOME"] = str(home)
    return subprocess.run([sys.executable, "-m", "aliaslint", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          check=True).stdout


def everything(root: Path) -> dict[str, bytes | str]:
    """Every file below ``root`` with its content (a directory or symlink by its kind)."""
    found: dict[str, bytes | str] = {}
    for folder, directories, files in os.walk(root):
        for name in directories + files:
            path = Path(folder, name)
            relative = str(path.relative_to(root))
            if path.is_symlink():
                found[relative] = f"-> {os.readlink(path)}"
            elif path.is_dir():
                found[relative] = "dir"
            else:
                found[relative] = path.read_bytes()
    return found


@pytest.fixture
def workspace(tmp_path):
    """``tmp_path/proj``, a git repository with a model, user data and its own .gitignore,
    committed; ``tmp_path/sibling``, another project beside it."""
    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    (project / "src" / "gate.py").write_text(MODEL)
    (project / "data").mkdir()
    (project / "data" / "train.csv").write_text("x,y\n1,2\n")
    (project / ".gitignore").write_text("*.log\n")
    (tmp_path / "sibling").mkdir()
    (tmp_path / "sibling" / "notes.txt").write_text("keep me\n")
    git("init", "-q", cwd=project)
    git("add", "-A", cwd=project)
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "start",
        cwd=project)
    return tmp_path


def configure(project: Path, cache_dir: str) -> None:
    """Set cache-dir in the project's pyproject.toml, committed like any other file."""
    (project / "pyproject.toml").write_text(f'[tool.aliaslint]\ncache-dir = "{cache_dir}"\n')
    git("add", "pyproject.toml", cwd=project)
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "config",
        cwd=project)


REFUSALS = {
    ".": "{proj} is the project root",
    "..": "{root} contains the project root",
    "data": "{proj}/data holds files aliaslint did not write (train.csv)",
}


@pytest.mark.parametrize("inside", [True, False], ids=["from-inside", "from-outside"])
@pytest.mark.parametrize("cache_dir", sorted(REFUSALS))
def test_a_cache_dir_that_is_not_a_cache_is_refused_and_nothing_changes(
        workspace, cache_dir, inside):
    project = workspace / "proj"
    configure(project, cache_dir)
    before = everything(workspace)
    where, prefix = (project, "") if inside else (workspace, "proj/")
    reason = REFUSALS[cache_dir].format(proj=project, root=workspace)
    expected = (f'aliaslint: error: {prefix}pyproject.toml: [tool.aliaslint] cache-dir = '
                f'"{cache_dir}": {reason}; the cache needs a directory of its own (such as '
                "'.aliaslint_cache')\n")
    for command in (["check", f"{prefix}src"], ["clean"]):
        result = aliaslint(*command, "--config", f"{prefix}pyproject.toml", cwd=where)
        assert (result.returncode, result.stdout, result.stderr) == (2, "", expected)
    assert everything(workspace) == before  # compared first: `git status` may refresh .git/index
    assert git("status", "--porcelain", "--ignored", cwd=project) == ""


def test_a_directory_aliaslint_makes_is_tagged_ignored_and_cleaned_whole(workspace):
    project = workspace / "proj"
    configure(project, "build/lint")
    result = aliaslint("check", "src", "--output-format", "concise", cwd=project)
    assert result.returncode == 1 and "src/gate.py:13:9: AL101" in result.stdout
    cache = project / "build" / "lint"
    assert (cache / TAG_NAME).read_text().endswith(_MADE)
    assert (cache / ".gitignore").read_text() == "# Automatically created by aliaslint.\n*\n"
    assert git("status", "--porcelain", cwd=project) == ""
    assert not [p for p in (project / "build").iterdir() if p.name != "lint"]  # no temporaries
    result = aliaslint("clean", cwd=project)
    assert (result.returncode, result.stdout) == (0, "Removed build/lint\n")
    assert not cache.exists() and (project / "build").is_dir()
    assert aliaslint("clean", cwd=project).stdout == "No cache at build/lint\n"


def test_an_existing_empty_directory_is_used_as_it_is(workspace):
    """Not made by aliaslint: no tag or .gitignore is written into it, and `clean` empties it
    but leaves the directory."""
    project = workspace / "proj"
    configure(project, "lint-cache")
    (project / "lint-cache").mkdir()
    assert aliaslint("check", "src", cwd=project).returncode == 1
    assert sorted(p.name for p in (project / "lint-cache").iterdir()) == ["0.1.0"]
    result = aliaslint("clean", cwd=project)
    assert result.stdout == ("Removed 1 cache entry from lint-cache; kept the directory: "
                             "aliaslint did not make it\n")
    assert list((project / "lint-cache").iterdir()) == []


def test_clean_keeps_what_it_did_not_write(workspace):
    project = workspace / "proj"
    assert aliaslint("check", "src", cwd=project).returncode == 1
    cache = project / ".aliaslint_cache"
    (cache / "notes.md").write_text("mine\n")
    (cache / "0.1.0" / "entries" / "mine.txt").write_text("mine too\n")
    unlisted = cache / "0.1.0" / "entries" / "cd" / ("cd" + "1" * 38)  # shaped like an entry
    unlisted.parent.mkdir()
    unlisted.write_text("not listed\n")
    assert aliaslint("check", "src", cwd=project).returncode == 1  # still its own directory
    result = aliaslint("clean", cwd=project)
    assert result.stdout == ("Removed 1 cache entry from .aliaslint_cache; kept the directory: "
                             "it holds files the cache does not list (0.1.0/entries/cd/"
                             f"{unlisted.name}, 0.1.0/entries/mine.txt, notes.md)\n")
    assert everything(cache) == {
        TAG_NAME: (cache / TAG_NAME).read_bytes(),
        ".gitignore": (cache / ".gitignore").read_bytes(), "notes.md": b"mine\n",
        "0.1.0": "dir", "0.1.0/entries": "dir", "0.1.0/entries/mine.txt": b"mine too\n",
        "0.1.0/entries/cd": "dir", f"0.1.0/entries/cd/{unlisted.name}": b"not listed\n"}


def test_default_cache_dir_holding_user_files_is_refused(workspace):
    project = workspace / "proj"
    (project / ".aliaslint_cache").mkdir()
    (project / ".aliaslint_cache" / "todo.txt").write_text("x\n")
    result = aliaslint("check", "src", cwd=project)
    assert (result.returncode, result.stderr) == (2, (
        "aliaslint: error: the default cache directory .aliaslint_cache (`cache-dir` moves it): "
        f"{project}/.aliaslint_cache holds files aliaslint did not write (todo.txt); the cache "
        "needs a directory of its own (such as '.aliaslint_cache')\n"))


@pytest.mark.parametrize("cache_dir, reason", [
    ("/", "/ is the file system root"),
    ("~", "{home} is the home directory"),
    ("~/..", "{parent} contains the home directory"),
    ("src/gate.py", "{proj}/src/gate.py is the checked path src/gate.py"),
    ("src", "{proj}/src is the checked path src"),
])
def test_root_home_and_checked_paths_are_refused(workspace, cache_dir, reason):
    project = workspace / "proj"
    home = workspace / "home"
    home.mkdir()
    configure(project, cache_dir)
    checked = "src/gate.py" if cache_dir == "src/gate.py" else "src"
    result = aliaslint("check", checked, cwd=project, home=home)
    assert result.returncode == 2 and result.stdout == ""
    assert f"{reason.format(home=home, parent=workspace, proj=project)}; " in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_the_refusal_is_one_line_whatever_the_names_hold(workspace):
    project = workspace / "proj"
    configure(project, "data")
    (project / "data" / "two\nlines.csv").write_text("x\n")
    result = aliaslint("check", "src", cwd=project)
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "holds files aliaslint did not write (train.csv, two\\nlines.csv)" in result.stderr


def test_a_file_is_not_a_cache_directory(workspace):
    project = workspace / "proj"
    configure(project, "data/train.csv")
    result = aliaslint("check", "src", cwd=project)
    assert result.returncode == 2
    assert f"{project}/data/train.csv is not a directory; " in result.stderr
    assert (project / "data" / "train.csv").read_text() == "x,y\n1,2\n"


def test_a_symlinked_cache_dir_is_judged_by_where_it_points(workspace):
    project = workspace / "proj"
    configure(project, "lint")
    (project / "lint").symlink_to("../sibling")
    result = aliaslint("check", "src", cwd=project)
    assert result.returncode == 2
    assert f"{workspace}/sibling holds files aliaslint did not write (notes.txt)" in result.stderr
    (project / "lint").unlink()
    (project / "lint").symlink_to(workspace / "tmpfs-cache")  # not there yet: made there
    assert aliaslint("check", "src", cwd=project).returncode == 1
    assert (workspace / "tmpfs-cache" / TAG_NAME).is_file()
    assert aliaslint("clean", cwd=project).stdout == "Removed lint\n"
    assert not (workspace / "tmpfs-cache").exists() and (project / "lint").is_symlink()
    (project / "lint").unlink()
    (project / "lint").symlink_to(".")
    result = aliaslint("clean", cwd=project)
    assert result.returncode == 2 and f"{project} is the project root" in result.stderr
    assert (workspace / "sibling" / "notes.txt").read_text() == "keep me\n"


def old_cache(directory: Path) -> Path:
    """A cache as the previous release wrote it: a tag without the record, an index of
    another shape, and an entry that no list names."""
    entry = directory / "0.1.0" / "entries" / "ab" / ("ab" + "0" * 38)
    entry.parent.mkdir(parents=True)
    entry.write_text('{"key": "ab", "diagnostics": []}')
    (directory / "0.1.0" / "index.json").write_text('{"x.py": [1, 2, "d"]}')
    (directory / TAG_NAME).write_text(
        "Signature: 8a477f597d28d172789f06886806bc55\n"
        "# This file is a cache directory tag created by aliaslint.\n"
        "# For information about cache directory tags see https://bford.info/cachedir/\n")
    (directory / ".gitignore").write_text("# Automatically created by aliaslint.\n*\n")
    return entry


def test_an_older_cache_is_taken_over_when_it_holds_nothing_else(workspace):
    project = workspace / "proj"
    old_cache(project / ".aliaslint_cache")
    assert aliaslint("check", "src", cwd=project).returncode == 1
    assert (project / ".aliaslint_cache" / TAG_NAME).read_text().endswith(_MADE)
    assert aliaslint("clean", cwd=project).stdout == "Removed .aliaslint_cache\n"
    assert not (project / ".aliaslint_cache").exists()


def test_an_older_cache_written_into_a_users_directory_is_refused(workspace):
    """What the previous release left in `data` with cache-dir = "data": its tag and
    .gitignore beside the user's files."""
    project = workspace / "proj"
    configure(project, "data")
    old_cache(project / "data")
    before = everything(workspace)
    for command in ("check", "clean"):
        result = aliaslint(command, cwd=project)
        assert result.returncode == 2 and "(train.csv)" in result.stderr
    assert everything(workspace) == before


def test_the_python_api_refuses_the_same(project):
    (project / "m.py").write_text(MODEL)
    with pytest.raises(ConfigError, match=r"^cache='\.': .* is the working directory; "):
        engine.check_paths(["."], jobs=1, cache=Path("."))
    assert sorted(p.name for p in project.iterdir()) == ["m.py"]


def test_runs_that_make_the_directory_at_once_agree(tmp_path):
    target = tmp_path / "cache"
    barrier = threading.Barrier(8)
    errors = []

    def make():
        barrier.wait()
        try:
            _make_directory(target)
        except OSError as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=make) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache"]
    assert sorted(p.name for p in target.iterdir()) == [".gitignore", TAG_NAME]


def test_a_fifo_in_place_of_an_entry_or_index_is_never_waited_on(project):
    (project / "m.py").write_text(MODEL)
    expected = engine.check_paths(["."], jobs=1, cache=True).diagnostics
    root = project / ".aliaslint_cache" / "0.1.0"
    for entry in (root / "entries").glob("*/*"):
        entry.unlink()
        os.mkfifo(entry)
    (root / "index.json").unlink(missing_ok=True)
    os.mkfifo(root / "index.json")
    assert engine.check_paths(["."], jobs=1, cache=True).diagnostics == expected


# -- entries -------------------------------------------------------------------------------


def aged_tree(project: Path) -> None:
    (project / "gate.py").write_text(MODEL)
    (project / "clean.py").write_text("import torch\nx = torch.ones(2)\ny = x.clone()\n")
    (project / "nb.ipynb").write_text(NOTEBOOK)
    for path in project.iterdir():
        stat = path.stat()
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns - 60_000_000_000))


def entry_of(project: Path, filename: str) -> Path:
    """The entry of a file (the one whose findings name it, or the one with none)."""
    cache = Cache(project / ".aliaslint_cache")
    index = json.loads((cache.root / "index.json").read_text())
    digest = index[str(project / filename)][2]
    for path in (cache.root / "entries").glob("*/*"):
        if json.loads(path.read_text())["digest"] == digest:
            return path
    raise AssertionError(filename)


def forge(field, value):
    """Set one field of every finding of an entry (its position in the stored list)."""
    def change(entry):
        for item in entry["diagnostics"]:
            item[field] = value
        return entry
    return change


FORGED = {
    "a cell in a plain file": ("gate.py", forge(9, 3)),
    "row 1,000,000,000": ("gate.py", forge(3, [1_000_000_000, 1])),
    "a column past the line": ("gate.py", forge(4, [13, 400])),
    "an end before the start": ("gate.py", forge(4, [1, 1])),
    "a related row past the file": ("gate.py", lambda e: [
        item[5].__setitem__(0, [item[5][0][0], "", [99, 1], [99, 2], None])
        for item in e["diagnostics"]] and e),
    "a related location in another file": ("gate.py", lambda e: [
        item[5].__setitem__(0, [item[5][0][0], "other.py", *item[5][0][2:]])
        for item in e["diagnostics"]] and e),
    "a witness row past the file": ("gate.py", lambda e: [
        item[10][1].append(500) for item in e["diagnostics"]] and e),
    "an empty list under the key alone": ("gate.py", lambda e: {"key": e["key"],
                                                                 "diagnostics": []}),
    "another file's entry moved in": ("gate.py", "clean.py"),
    "a wrong digest": ("gate.py", lambda e: {**e, "digest": "0" * 32}),
    "wrong settings": ("gate.py", lambda e: {**e, "settings": "AL101|high"}),
    "another version's fingerprint": ("gate.py", lambda e: {**e, "fingerprint": "0" * 32}),
    "another format": ("gate.py", lambda e: {**e, "format": 2}),
    "truncated JSON": ("gate.py", "truncate"),
    "a changed message under the old checksum": ("gate.py", "stale checksum"),
    "a row as a string": ("gate.py", forge(3, ["13", 9])),
    "a row as a float": ("gate.py", forge(3, [13.0, 9])),
    "a row as true": ("gate.py", forge(3, [True, 9])),
    "a message as a number": ("gate.py", forge(1, 5)),
    "a status on a static finding": ("gate.py", forge(8, "confirmed")),
    "an unknown code": ("gate.py", forge(0, "ZZ999")),
    "a markdown cell": ("nb.ipynb", forge(9, 1)),
    "a cell past the notebook": ("nb.ipynb", forge(9, 7)),
    "no cell in a notebook": ("nb.ipynb", forge(3, [40, 1])),
}


@pytest.mark.parametrize("warm_path", ["stat-index", "content-hash"])
@pytest.mark.parametrize("name", sorted(FORGED))
def test_a_forged_entry_is_refused_recomputed_and_overwritten(project, parsed, name, warm_path):
    aged_tree(project)
    expected = engine.check_paths(["."], jobs=1, cache=True).diagnostics
    assert [(d.filename, d.cell, d.location.row, d.code) for d in expected] == [
        ("gate.py", None, 13, "AL101"), ("nb.ipynb", 2, 3, "AL401")]
    target, change = FORGED[name]
    path = entry_of(project, target)
    honest = path.read_text()
    if change == "truncate":
        path.write_text(honest[: len(honest) // 2])
    elif change == "stale checksum":
        path.write_text(honest.replace("out-of-place", "in-place"))
        assert path.read_text() != honest
    elif isinstance(change, str):
        path.write_text(entry_of(project, change).read_text())
    else:
        # Checksummed again, as a careful forger would: the field checks alone refuse it.
        forged = change(json.loads(honest))
        if "check" in forged:
            forged["check"] = _checksum(forged["key"], forged["diagnostics"])
        path.write_text(json.dumps(forged))
    if warm_path == "content-hash":
        (project / ".aliaslint_cache" / "0.1.0" / "index.json").unlink()
    parsed.clear()
    assert engine.check_paths(["."], jobs=1, cache=True).diagnostics == expected
    assert parsed == [target]
    assert path.read_text() == honest
    parsed.clear()
    assert engine.check_paths(["."], jobs=1, cache=True).diagnostics == expected
    assert parsed == []


def test_a_forged_extent_in_the_index_is_refused(project, parsed):
    """The index's record of a file is read as strictly as an entry."""
    aged_tree(project)
    expected = engine.check_paths(["."], jobs=1, cache=True).diagnostics
    index_path = project / ".aliaslint_cache" / "0.1.0" / "index.json"
    index = json.loads(index_path.read_text())
    for record in index.values():
        record[3] = [-1, "wide", None]
    index_path.write_text(json.dumps(index))
    parsed.clear()
    assert engine.check_paths(["."], jobs=1, cache=True).diagnostics == expected
    assert parsed == []  # hashed again (the entries are sound), not parsed


def test_every_real_finding_round_trips(project, parsed):
    """The bounds never refuse an honest entry: the rule cases and fixtures, with their
    fixes, witnesses, notebook cells and per-file errors, all come back from the cache."""
    for source in (REPO / "tests" / "rules", REPO / "fixtures"):
        shutil.copytree(source, project / source.name)
    (project / "broken.py").write_text("def f(:\n")
    # Every kind of line break and a byte-order mark: the bounds count lines generously.
    (project / "lone_cr.py").write_bytes(b"#a\rb = 1\n#c\rd = 2\n" + MODEL.encode())
    (project / "crlf.py").write_bytes(b"\xef\xbb\xbf" + MODEL.replace("\n", "\r\n").encode())
    (project / "feed.py").write_text(MODEL.replace("        y.mul_", "\x0c        y.mul_"))
    (project / "bom.ipynb").write_bytes(b"\xef\xbb\xbf" + NOTEBOOK.encode())
    cold = engine.check_paths(["."], jobs=1, cache=True).diagnostics
    assert len(cold) > 150 and any(d.fix for d in cold) and any(d.cell for d in cold)
    assert any(d.code == "AL902" for d in cold)
    assert {d.filename for d in cold if d.code in ("AL101", "AL401")} >= {
        "lone_cr.py", "crlf.py", "feed.py", "bom.ipynb"}
    parsed.clear()
    assert engine.check_paths(["."], jobs=1, cache=True).diagnostics == cold
    assert parsed == []


def test_the_refusal_names_the_file_that_sets_cache_dir(project, capsys):
    """A value inherited through `extend` is reported with the file that wrote it."""
    (project / "configs").mkdir()
    (project / "configs" / "base.toml").write_text('cache-dir = ".."\n')
    (project / "pyproject.toml").write_text('[tool.aliaslint]\nextend = "configs/base.toml"\n')
    (project / "m.py").write_text(MODEL)
    assert main(["check", "m.py"]) == 2
    assert capsys.readouterr().err == (
        'aliaslint: error: configs/base.toml: [tool.aliaslint] cache-dir = "..": '
        f"{project} is the project root; the cache needs a directory of its own (such as "
        "'.aliaslint_cache')\n")


def test_clean_never_follows_a_symlink_out_of_the_cache(project, capsys):
    (project / "m.py").write_text(MODEL)
    engine.check_paths(["."], jobs=1, cache=True)
    root = project / ".aliaslint_cache" / "0.1.0"
    outside = project.parent / f"{project.name}-outside"
    shutil.move(root / "entries", outside)  # the listed entries, now outside the cache
    (root / "entries").symlink_to(outside)
    before = everything(outside)
    assert main(["clean"]) == 0
    assert everything(outside) == before and before
    assert capsys.readouterr().out == ("Removed 0 cache entries from .aliaslint_cache; kept the "
                                       "directory: it holds files the cache does not list "
                                       "(0.1.0/entries)\n")
