"""What `check --fix` may write and how: all of a file or none of it, only inside the checked
tree (or a file named), and a fix that was not written counted as remaining."""

from __future__ import annotations

import errno
import json
import os
import resource
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from aliaslint import cli_fix, writes
from aliaslint.cli import main

# A training step whose in-place write on a saved tensor the unsafe fix rewrites.
STEP = ("import torch\n"
        "w = torch.randn(3, requires_grad=True)\n"
        "y = w.sigmoid()\n"
        "y.mul_(2)\n"
        "y.sum().backward()\n")
FIXED = STEP.replace("y.mul_(2)", "y = y.mul(2)")
# Large enough that a 2,048-byte file-size limit cuts the rewrite short.
PADDED = "".join(f"# step {i:03d}: the loss of a small model, written out at length\n"
                 for i in range(55)) + STEP


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["check", "--isolated", "--no-cache", "--fix", "--unsafe-fixes",
                 "--output-format", "concise", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _listing(directory: Path) -> list[str]:
    return sorted(os.listdir(directory))


def test_a_write_cut_short_by_the_file_size_limit_leaves_the_file_whole(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(PADDED)
    assert path.stat().st_size > 3000

    def limit() -> None:  # `ulimit -f 2`: Python ignores SIGXFSZ, so a write gets EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))

    done = subprocess.run([sys.executable, "-m", "aliaslint", "check", "--isolated", "--no-cache",
                           "--fix", "--unsafe-fixes", "--output-format", "concise", "train.py"],
                          cwd=tmp_path, capture_output=True, text=True, preexec_fn=limit)
    assert done.returncode == 2
    assert "train.py: not fixed: cannot write the file: File too large" in done.stderr
    assert "Found 1 finding (0 fixed, 1 remaining)." in done.stdout
    assert path.read_text() == PADDED and _listing(tmp_path) == ["train.py"]


@pytest.mark.parametrize("where", ["write", "fsync"])
def test_a_full_disk_leaves_the_file_whole(tmp_path, capsys, monkeypatch, where):
    monkeypatch.chdir(tmp_path)
    Path("train.py").write_text(STEP)

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    if where == "fsync":
        monkeypatch.setattr(writes.os, "fsync", full)
    else:
        monkeypatch.setattr(writes.os, "fdopen", lambda handle, mode: _FullFile(handle))
    code, out, err = run(capsys, "train.py")
    assert code == 2 and "train.py: not fixed: cannot write the file: No space left" in err
    assert "(0 fixed, 1 remaining)" in out
    assert Path("train.py").read_text() == STEP and _listing(tmp_path) == ["train.py"]


class _FullFile:
    """A file whose disk fills after the first few bytes."""

    def __init__(self, handle: int):
        self.file = open(handle, "wb")

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.file.close()

    def write(self, data: bytes) -> int:
        self.file.write(data[:10])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_read_only_file_is_not_fixed_and_the_run_fails(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = Path("train.py")
    path.write_text(STEP)
    path.chmod(0o444)
    code, out, err = run(capsys, "train.py")
    assert code == 2 and "train.py: not fixed: the file is read-only" in err
    assert "(0 fixed, 1 remaining)" in out and "train.py:4:1: AL101" in out
    assert path.read_text() == STEP and stat.S_IMODE(path.stat().st_mode) == 0o444


def test_a_file_in_a_read_only_directory_is_not_fixed(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "src").mkdir()
    path = tmp_path / "src" / "train.py"
    path.write_text(STEP)
    (tmp_path / "src").chmod(0o555)
    try:
        code, out, err = run(capsys, "src")
    finally:
        (tmp_path / "src").chmod(0o755)
    assert code == 2 and "src/train.py: not fixed: its directory is read-only" in err
    assert path.read_text() == STEP and _listing(tmp_path / "src") == ["train.py"]


def test_a_file_changed_on_disk_during_the_run_is_not_overwritten(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = Path("train.py")
    path.write_text(STEP)
    edited = STEP + "print(w.grad)\n"

    def edit_meanwhile() -> None:  # an editor saves just before the rename
        path.write_text(edited)

    real_fix_file = cli_fix.fix_file
    monkeypatch.setattr(cli_fix, "fix_file", lambda *args, **kwargs: real_fix_file(
        *args, **kwargs, before_replace=edit_meanwhile))
    code, out, err = run(capsys, "train.py")
    assert code == 1 and "train.py: not fixed: the file changed on disk while it was being fixed" \
        in err
    assert "(0 fixed, 1 remaining)" in out
    assert path.read_text() == edited and _listing(tmp_path) == ["train.py"]


def test_a_file_with_hard_links_is_not_fixed(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = Path("train.py")
    path.write_text(STEP)
    os.link(path, "copy_of_train.txt")
    code, out, err = run(capsys, "train.py")
    assert code == 1 and "train.py: not fixed: it has 2 hard links" in err
    assert path.read_text() == STEP and Path("copy_of_train.txt").read_text() == STEP
    assert path.stat().st_nlink == 2


@pytest.mark.parametrize("mode", [0o644, 0o755, 0o600, 0o664, 0o2775])
def test_a_fixed_file_keeps_its_mode_and_owner(tmp_path, capsys, monkeypatch, mode):
    monkeypatch.chdir(tmp_path)
    path = Path("train.py")
    path.write_text(STEP)
    if os.geteuid() == 0:
        os.chown(path, 1234, 2345)
    path.chmod(mode)  # after the owner: changing it clears the set-group-ID bit
    before = path.stat()
    code, out, err = run(capsys, "train.py")
    assert code == 0 and "(1 fixed, 0 remaining)" in out and not err
    after = path.stat()
    assert path.read_text() == FIXED and _listing(tmp_path) == ["train.py"]
    assert stat.S_IMODE(after.st_mode) == mode
    assert (after.st_uid, after.st_gid) == (before.st_uid, before.st_gid)
    assert after.st_ino != before.st_ino  # a new file renamed over the old one


def test_a_notebook_write_that_fails_leaves_the_notebook_whole(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": STEP.splitlines(keepends=True)}
    notebook = json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4,
                           "nbformat_minor": 5}, indent=1) + "\n"
    Path("train.ipynb").write_text(notebook)

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(writes.os, "fsync", full)
    code, out, err = run(capsys, "train.ipynb")
    assert code == 2 and "train.ipynb: not fixed: cannot write the file" in err
    assert Path("train.ipynb").read_text() == notebook and _listing(tmp_path) == ["train.ipynb"]
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "train.ipynb")
    assert code == 0 and "y = y.mul(2)" in "".join(
        json.loads(Path("train.ipynb").read_text())["cells"][0]["source"])


# --- symbolic links -------------------------------------------------------------------------


@pytest.fixture
def tree(tmp_path, monkeypatch) -> Path:
    """tree/ with links to a file outside it, to a file inside, and broken ones."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tree" / "models").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "notes.txt").write_text(STEP)
    (tmp_path / "elsewhere" / "step.py").write_text(STEP)
    (tmp_path / "tree" / "models" / "step.py").write_text(STEP)
    os.symlink("../elsewhere/notes.txt", tmp_path / "tree" / "abs.py")
    os.symlink("models/step.py", tmp_path / "tree" / "inside.py")
    os.symlink("missing.py", tmp_path / "tree" / "dangling.py")
    os.symlink("loop.py", tmp_path / "tree" / "loop.py")
    os.symlink("../elsewhere", tmp_path / "tree" / "linked")
    os.mkfifo(tmp_path / "elsewhere" / "pipe")
    os.symlink("../elsewhere/pipe", tmp_path / "tree" / "pipe.py")
    return tmp_path


def test_a_link_out_of_the_tree_is_checked_but_not_written(tree, capsys):
    code, out, err = run(capsys, "tree")
    assert code == 1
    # Checked: the outside link; written: the file in the tree and the link into it.
    assert out.splitlines()[0] == "tree/abs.py:4:1: AL101 `y.mul_(2)` overwrites `y`, saved " \
        "for backward by `w.sigmoid()`; `y.sum().backward()` at line 5 will raise"
    assert "Found 3 findings (2 fixed, 1 remaining)." in out
    assert err == (f"aliaslint: warning: tree/abs.py: not fixed: it is a symbolic link to "
                   f"{tree / 'elsewhere' / 'notes.txt'}, outside the checked directories "
                   "(name the link on the command line to fix it there)\n")
    assert (tree / "elsewhere" / "notes.txt").read_text() == STEP
    # Not followed: the directory link; skipped: dangling, looping and non-file links.
    assert (tree / "elsewhere" / "step.py").read_text() == STEP
    assert (tree / "tree" / "models" / "step.py").read_text() == FIXED
    assert (tree / "tree" / "inside.py").is_symlink() and (tree / "tree" / "abs.py").is_symlink()


def test_a_link_inside_the_tree_is_written_through(tree, capsys):
    code, out, err = run(capsys, "tree/inside.py")
    assert code == 0 and "(1 fixed, 0 remaining)" in out
    assert (tree / "tree" / "inside.py").is_symlink()
    assert (tree / "tree" / "models" / "step.py").read_text() == FIXED


def test_a_link_named_on_the_command_line_is_written_through(tree, capsys):
    code, out, err = run(capsys, "tree/abs.py")
    assert code == 0 and "(1 fixed, 0 remaining)" in out and not err
    assert (tree / "tree" / "abs.py").is_symlink()
    assert (tree / "elsewhere" / "notes.txt").read_text() == FIXED


def test_a_directory_named_through_a_link_is_a_checked_directory(tree, capsys):
    code, out, err = run(capsys, "tree/linked")
    assert code == 0 and "(1 fixed, 0 remaining)" in out and not err
    assert (tree / "elsewhere" / "step.py").read_text() == FIXED
    assert (tree / "elsewhere" / "notes.txt").read_text() == STEP  # not a .py name


def test_broken_links_are_skipped_without_an_error(tree, capsys):
    for name in ("abs.py", "inside.py"):
        (tree / "tree" / name).unlink()
    (tree / "tree" / "models" / "step.py").write_text(FIXED)
    code, out, err = main(["check", "--isolated", "--no-cache", "--verbose", "tree"]), \
        *capsys.readouterr()
    assert code == 0 and "All checks passed! (1 file checked)" in out
    assert "skipped tree/dangling.py: a symbolic link that leads nowhere" in err
    assert "skipped tree/loop.py: a symbolic link that leads nowhere" in err
    assert "skipped tree/pipe.py: a symbolic link to something other than a file" in err


def test_diff_leaves_out_what_fix_would_not_write(tree, capsys):
    code = main(["check", "--isolated", "--no-cache", "--diff", "--unsafe-fixes", "tree"])
    out, err = capsys.readouterr()
    assert code == 1 and "Would fix 2 findings." in err
    assert "tree/abs.py: not fixed: it is a symbolic link to" in err
    assert "+++ tree/inside.py" in out and "+++ tree/abs.py" not in out
    assert (tree / "elsewhere" / "notes.txt").read_text() == STEP
    assert (tree / "tree" / "models" / "step.py").read_text() == STEP
