"""The result cache: warm runs parse nothing, and every change that matters rechecks."""

import json
import os
import threading
from pathlib import Path

import pytest

from aliaslint import engine, quiet
from aliaslint.cache import Binding, Cache, extent_of
from aliaslint.cli import main
from aliaslint.config import CliOptions

BAD = "import torch\na = torch.zeros(3)\nprint(id(a) == id(a[1:]))\n"
NOTEBOOK = json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
    {"cell_type": "markdown", "metadata": {}, "source": ["# x"]},
    {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
     "source": ["%matplotlib inline\n", BAD]},
]})


class Parsed:
    """The sources the engine parses, told through a file: the worker processes that
    parse them do not share the test's memory."""

    def __init__(self, log: Path):
        self.log = log
        log.write_text("")

    def names(self) -> list[str]:
        return self.log.read_text().splitlines()

    def clear(self) -> None:
        self.log.write_text("")

    def __iter__(self):
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    def __eq__(self, other: object) -> bool:
        return self.names() == other


@pytest.fixture
def parsed(monkeypatch, tmp_path_factory):
    """The sources the engine parses during a test."""
    calls = Parsed(tmp_path_factory.mktemp("parsed") / "log")
    real = engine._parse

    def counting(source, filename, *rest, **options):
        with calls.log.open("a") as log:
            log.write(filename + "\n")
        return real(source, filename, *rest, **options)

    monkeypatch.setattr(engine, "_parse", counting)
    return calls


def age(path: Path, seconds=60):
    """Backdate a file, as if it had been written a while ago (fresh files are rehashed)."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns - seconds * 1_000_000_000))


def tree(project: Path):
    for name, text in {"a.py": BAD, "b.py": BAD.replace("a[1:]", "a"), "nb.ipynb": NOTEBOOK,
                       "plain.py": "x = 1\n"}.items():
        (project / name).write_text(text)
        age(project / name)


def check(**options):
    result = engine.check_paths(["."], options.pop("cli", CliOptions()), jobs=1, cache=True,
                                **options)
    return [(d.filename, d.cell, d.location.row, d.code) for d in result.diagnostics]


def test_warm_run_parses_nothing_and_finds_the_same(project, parsed):
    tree(project)
    cold = check()
    assert sorted(parsed) == ["a.py", "b.py", "nb.ipynb"]
    parsed.clear()
    assert check() == cold and parsed == []
    uncached = engine.check_paths(["."], jobs=1).diagnostics
    assert cold == [(d.filename, d.cell, d.location.row, d.code) for d in uncached]
    assert ("nb.ipynb", 2, 4, "AL401") in cold


def test_warm_run_reads_no_source(project, monkeypatch):
    tree(project)
    check()
    real = Path.read_bytes

    def read_bytes(self):
        assert self.suffix not in (".py", ".ipynb"), f"read {self}"
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    assert len(check()) == 3


def test_changed_file_is_rechecked_alone(project, parsed):
    tree(project)
    check()
    parsed.clear()
    (project / "b.py").write_text(BAD + "print(a.sum())\n")
    assert ("b.py", None, 3, "AL401") in check()
    assert parsed == ["b.py"]


def test_touched_but_unchanged_file_is_hashed_not_parsed(project, parsed):
    tree(project)
    check()
    parsed.clear()
    os.utime(project / "a.py")
    check()
    assert parsed == []


def test_config_change_rechecks(project, parsed):
    tree(project)
    check()
    parsed.clear()
    (project / "pyproject.toml").write_text("[tool.aliaslint]\nconfidence = 'low'\n")
    check()
    assert sorted(parsed) == ["a.py", "b.py", "nb.ipynb"]
    parsed.clear()
    check(cli=CliOptions(isolated=True))  # the defaults again: those results are still there
    assert parsed == []


def test_per_file_ignores_key_only_the_files_they_match(project, parsed, monkeypatch):
    # Without AL401 no enabled rule can fire in b.py, which its recheck would then answer
    # unparsed (aliaslint/quiet.py): parse it, so that the recheck shows.
    monkeypatch.setenv(quiet.DISABLE, "1")
    tree(project)
    check()
    parsed.clear()
    (project / "pyproject.toml").write_text(
        "[tool.aliaslint]\nper-file-ignores = { 'b.py' = ['AL401'] }\n")
    check()
    assert parsed == ["b.py"]


def test_changed_checker_rechecks_everything(project, parsed, monkeypatch):
    tree(project)
    check()
    parsed.clear()
    monkeypatch.setattr("aliaslint.cache.tool_fingerprint", lambda: "another rule table")
    check()
    assert sorted(parsed) == ["a.py", "b.py", "nb.ipynb"]


def test_corrupt_and_foreign_entries_are_rebuilt(project, parsed):
    tree(project)
    expected = check()
    entries = sorted((project / ".aliaslint_cache").rglob("entries/*/*"))
    assert len(entries) == 4
    entries[0].write_text("{not json")
    entries[1].write_text(json.dumps({"key": "someone else's", "diagnostics": []}))
    entries[2].write_text(json.dumps({"key": entries[2].name, "diagnostics": [["AL401"]]}))
    (project / ".aliaslint_cache" / "0.1.0" / "index.json").write_text("[1, 2")
    parsed.clear()
    assert check() == expected
    assert len(parsed) >= 2
    parsed.clear()
    assert check() == expected and parsed == []


def test_hostile_entries_are_misses_not_crashes_or_findings(project, parsed):
    """Deeply nested JSON, wrong field types and made-up codes: each entry is recomputed."""
    tree(project)
    expected = check()
    entries = sorted((project / ".aliaslint_cache").rglob("entries/*/*"),
                     key=lambda path: not json.loads(path.read_text())["diagnostics"])
    real = json.loads(entries[0].read_text())["diagnostics"]
    assert real, "an entry holds a finding to forge"
    forged = [list(item) for item in real]
    forged[0][0] = "ZZ999"
    entries[0].write_text(json.dumps({"key": entries[0].name, "diagnostics": forged}))
    entries[1].write_text(json.dumps({"key": entries[1].name,
                                      "diagnostics": [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]]}))
    entries[2].write_text("[" * 100_000 + "]" * 100_000)
    (project / ".aliaslint_cache" / "0.1.0" / "index.json").write_text("{\"a\": " * 50_000)
    assert check() == expected
    assert check() == expected


def test_cache_directory_layout_and_clean(project, capsys):
    tree(project)
    assert main(["check", "--output-format", "concise"]) == 1
    cache = project / ".aliaslint_cache"
    assert (cache / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert (cache / ".gitignore").read_text().splitlines()[-1] == "*"
    assert not list(cache.rglob(".tmp-*"))
    capsys.readouterr()
    assert main(["clean"]) == 0
    assert not cache.exists() and capsys.readouterr().out == "Removed .aliaslint_cache\n"
    assert main(["clean"]) == 0 and "No cache" in capsys.readouterr().out
    main(["check", "--no-cache"])
    assert not cache.exists()


def test_clean_refuses_a_directory_that_is_not_a_cache(project, capsys):
    (project / "pyproject.toml").write_text("[tool.aliaslint]\ncache-dir = 'src'\n")
    (project / "src").mkdir()
    assert main(["clean"]) == 0 and capsys.readouterr().out == "No cache at src\n"
    (project / "src" / "model.py").write_text("x = 1\n")
    assert main(["clean"]) == 2
    assert capsys.readouterr().err == (
        "aliaslint: error: pyproject.toml: [tool.aliaslint] cache-dir = \"src\": "
        f"{project / 'src'} holds files aliaslint did not write (model.py); the cache needs a "
        "directory of its own (such as '.aliaslint_cache')\n")
    assert (project / "src" / "model.py").read_text() == "x = 1\n"


def test_cache_dir_setting(project):
    tree(project)
    (project / "pyproject.toml").write_text("[tool.aliaslint]\ncache-dir = 'build/lint'\n")
    (project / "sub").mkdir()
    os.chdir(project / "sub")  # the config above the working directory decides
    (project / "sub" / "c.py").write_text(BAD)
    engine.check_paths(["."], jobs=1, cache=True)
    assert (project / "build" / "lint" / "CACHEDIR.TAG").is_file()
    assert not (project / "sub" / ".aliaslint_cache").exists()


def test_concurrent_runs_share_one_cache(project):
    tree(project)
    for index in range(30):
        (project / f"m{index}.py").write_text(BAD.replace("3", str(index + 3)))
    errors = []

    def run():
        try:
            assert len(engine.check_paths(["."], jobs=1, cache=True).diagnostics) == 33
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(engine.check_paths(["."], jobs=2, cache=True).diagnostics) == 33


def test_cached_findings_round_trip_exactly(project):
    tree(project)
    cold = engine.check_paths(["."], jobs=1, cache=True).diagnostics
    warm = engine.check_paths(["."], jobs=1, cache=True).diagnostics
    assert warm == cold
    store = Cache(project / "elsewhere")
    binding = Binding("digest", "python", "rules")
    extent = extent_of((project / cold[0].filename).read_bytes(), notebook=False)
    store.store(binding, cold[:1], extent)
    assert store.load(binding, "renamed.py", extent) == [cold[0].with_filename("renamed.py")]


HELPER = """import torch


def standardize(x):
    return (x - x.mean()) / x.std()
"""
CALLER = """import torch

from helpers import standardize


def step(w):
    y = w.sigmoid()
    y = standardize(y)
    y.sum().backward()
    a = torch.zeros(3)
    return id(a) == id(a[1:])
"""


def test_warm_run_reads_no_source_of_files_that_use_others(project, monkeypatch, parsed):
    (project / "helpers.py").write_text(HELPER)
    (project / "train.py").write_text(CALLER)
    for name in ("helpers.py", "train.py"):
        age(project / name)
    cold = check()
    assert cold == [("train.py", None, 11, "AL401")]
    store = Cache(engine.cache_location(engine.Resolver(CliOptions()))[0])
    assert store.dependencies(str(project / "train.py")) == [
        ("code", str(project / "helpers.py"))]
    real = Path.read_bytes

    def read_bytes(self):
        assert self.suffix not in (".py", ".ipynb"), f"read {self}"
        return real(self)

    with monkeypatch.context() as patched:
        patched.setattr(Path, "read_bytes", read_bytes)
        assert check() == cold
    parsed.clear()
    # The helper touched: its caller's entry is found by hashing it again, nothing parsed.
    os.utime(project / "helpers.py")
    age(project / "helpers.py")
    assert check() == cold and parsed == []
    # Its code changed, with the same size and an older mtime: still a miss for the
    # caller (the helper's own stat no longer matches its record).
    (project / "helpers.py").write_text(HELPER.replace("x.std()", "x.var()"))
    age(project / "helpers.py", 120)
    parsed.clear()
    assert check() == cold
    assert "train.py" in parsed
