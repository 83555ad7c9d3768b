"""`aliaslint check --stdin-filename PATH -`: standard input checked as if it were PATH."""

import io
import json
import sys

import pytest

from aliaslint.cli import main

BAD = "import torch\na = torch.zeros(3)\nprint(id(a) == id(a[1:]))\n"


def run(capsys, monkeypatch, data: bytes, *args):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    code = main(["check", "--color", "never", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def configured(project):
    (project / "pyproject.toml").write_text(
        '[tool.aliaslint]\nper-file-ignores = { "tests/*" = ["AL4"] }\n'
        'extend-exclude = ["generated"]\n', encoding="utf-8")
    return project


def test_stdin_is_checked_as_the_named_file(configured, capsys, monkeypatch):
    code, out, _ = run(capsys, monkeypatch, BAD.encode(), "--stdin-filename", "src/model.py",
                       "-", "--output-format", "concise")
    assert code == 1
    assert out.splitlines() == [out.splitlines()[0], "Found 1 finding in 1 of 1 file."]
    assert out.startswith("src/model.py:3:7: AL401 ")
    # The file on disk (absent here) is never read: the code frame shows standard input.
    code, out, _ = run(capsys, monkeypatch, BAD.encode(), "--stdin-filename", "src/model.py")
    assert "3 | print(id(a) == id(a[1:]))" in out


def test_per_file_ignores_and_excludes_follow_the_name(configured, capsys, monkeypatch):
    assert run(capsys, monkeypatch, BAD.encode(), "--stdin-filename", "tests/t.py", "-")[0] == 0
    # Excluded names are still checked unless --force-exclude, as for a file named on the
    # command line.
    assert run(capsys, monkeypatch, BAD.encode(), "--stdin-filename", "generated/g.py",
               "-")[0] == 1
    code, out, _ = run(capsys, monkeypatch, BAD.encode(), "--stdin-filename", "generated/g.py",
                       "--force-exclude", "-")
    assert code == 0 and "0 files" in out


def test_a_notebook_name_reads_notebook_json(project, capsys, monkeypatch):
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": "# look"},
        {"cell_type": "code", "metadata": {}, "source": BAD, "outputs": [],
         "execution_count": None}]}
    code, out, _ = run(capsys, monkeypatch, json.dumps(notebook).encode(),
                       "--stdin-filename", "explore.ipynb", "--output-format", "json")
    assert code == 1
    (finding,) = json.loads(out)
    assert (finding["filename"], finding["cell"], finding["location"]["row"]) == (
        "explore.ipynb", 2, 3)


def test_bare_dash_and_mixing(project, capsys, monkeypatch):
    code, out, _ = run(capsys, monkeypatch, BAD.encode(), "-", "--output-format", "concise")
    assert code == 1 and out.startswith("-:3:7: AL401")
    assert out.splitlines()[-1] == "Found 1 finding in 1 of 1 file."
    code, _, err = run(capsys, monkeypatch, BAD.encode(), "-", "other.py")
    assert code == 2 and "standard input" in err
    code, out, _ = run(capsys, monkeypatch, b"import torch\nx = (\n", "-")
    assert code == 2 and "AL902" in out
