"""The bound per file: the parse budget (predicted from CPython's tree, before libcst parses)
and the wall-clock `file-timeout` (the worker process is ended), with every `-j`."""

from __future__ import annotations

import ast
import os
import signal
import time
from pathlib import Path

import pytest

from aliaslint import engine, quiet
from aliaslint.config import CliOptions
from aliaslint.engine import check_paths, check_source
from aliaslint.screen import NODE_WORK, PARSE_BUDGET, parse_work

FIXTURES = Path(__file__).parent.parent / "fixtures"
BAD = "import torch\na = torch.zeros(3)\nprint(id(a) == id(a[1:]))\n"


@pytest.fixture(autouse=True)
def parse_quiet_files(monkeypatch):
    """``dense`` spells no write, so no rule could fire in it and it would not be parsed at
    all (aliaslint/quiet.py): these tests are about files that are."""
    monkeypatch.setenv(quiet.DISABLE, "1")


def dense(lines: int) -> str:
    """Ordinary statements, as many as asked: the shape of the slowest file reported (a
    generated model file of two statements repeated)."""
    return "import torch\n" + "x = torch.ones(3)\ny = x.sigmoid()\n" * (lines // 2)


def project(root: Path, config: str, **files: str) -> Path:
    (root / "pyproject.toml").write_text(f"[tool.aliaslint]\n{config}\n")
    for name, text in files.items():
        (root / name).write_text(text)
    return root


def codes(root: Path, jobs: int) -> dict[str, list[tuple[str, str]]]:
    result = check_paths([str(root)], CliOptions(isolated=False), jobs=jobs, cwd=root)
    found: dict[str, list[tuple[str, str]]] = {}
    for d in result.diagnostics:
        found.setdefault(d.filename, []).append((d.code, d.message))
    return found


def test_a_large_file_is_over_the_budget_before_it_is_parsed(monkeypatch):
    source = dense(2_000)
    work = parse_work(ast.parse(source))
    assert (work.nodes, work.units) == (11_003, 16_002)
    parsed = []
    monkeypatch.setattr(engine, "_parse", lambda *args: parsed.append(args))
    start = time.process_time()
    (finding,) = check_source(source, "gen.py", parse_budget=500_000)
    assert time.process_time() - start < 2
    assert parsed == []
    assert (finding.code, finding.location.row) == ("AL902", 1)
    assert finding.message == (
        "too costly to parse within the `parse-budget` per file: the file is too large "
        f"(parse work {16_002 + NODE_WORK * 11_003:,}, budget 500,000: 11,003 syntax nodes at "
        f"{NODE_WORK} each, 16,002 for their depth; raise `parse-budget` to check it, or "
        "split the file)")
    # Under the default budget the same file is parsed and checked.
    monkeypatch.undo()
    assert check_source(source, "gen.py") == []


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_configured_budget_applies_with_every_jobs(tmp_path, jobs):
    root = project(tmp_path, "parse-budget = 500000", **{"gen.py": dense(2_000), "bad.py": BAD,
                                                         "b.py": BAD, "c.py": BAD})
    found = codes(root, jobs)
    assert [code for code, _ in found["gen.py"]] == ["AL902"]
    assert "raise `parse-budget` to check it" in found["gen.py"][0][1]
    assert [code for code, _ in found["bad.py"]] == ["AL401"]


def test_no_fixture_is_near_the_budget():
    """Real-model-shaped files are far inside it: the budget changes no finding there."""
    for path in FIXTURES.rglob("*.py"):
        work = parse_work(ast.parse(path.read_text(encoding="utf-8")))
        assert work.total * 20 < PARSE_BUDGET, path


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_file_over_the_file_timeout_is_stopped_and_the_rest_checked(tmp_path, jobs):
    # About ten seconds of parsing and analysis on an idle machine (over the default
    # budget, raised here); a timeout that leaves `bad.py` room on a loaded machine.
    root = project(tmp_path, "file-timeout = 4\nparse-budget = 100_000_000",
                   **{"slow.py": dense(120_000), "bad.py": BAD})
    start = time.monotonic()
    found = codes(root, jobs)
    assert time.monotonic() - start < 30  # not the file's full time on a loaded machine
    assert found["slow.py"] == [("AL902", "not checked within the `file-timeout` of 4 s per "
                                          "file (raise it to check this file)")]
    assert [code for code, _ in found["bad.py"]] == ["AL401"]


def test_a_worker_that_dies_is_reported_and_replaced(tmp_path, monkeypatch):
    root = project(tmp_path, "", **{"a.py": BAD, "b.py": BAD, "c.py": BAD})
    real = engine._check_file

    def dying(path, *args):
        if path.name == "b.py":  # as the kernel's OOM killer would end it
            os.kill(os.getpid(), signal.SIGKILL)
        return real(path, *args)

    monkeypatch.setattr(engine, "_check_file", dying)
    found = codes(root, 1)
    assert found["b.py"] == [("AL902", "not checked: its worker process was ended by signal 9 "
                                       "(out of memory?)")]
    assert [code for code, _ in found["a.py"]] == [code for code, _ in found["c.py"]] == ["AL401"]


@pytest.mark.parametrize(("setting", "value"), [
    ("parse-budget", "0"), ("parse-budget", "true"), ("parse-budget", "1.5"),
    ("file-timeout", "0"), ("file-timeout", "-1"), ("file-timeout", '"60"'),
])
def test_a_bad_limit_is_a_configuration_error(tmp_path, setting, value):
    from aliaslint.config import ConfigError

    root = project(tmp_path, f"{setting} = {value}", **{"bad.py": BAD})
    with pytest.raises(ConfigError, match=f"{setting}: expected a positive number"):
        check_paths([str(root)], CliOptions(), jobs=1, cwd=root)


def _double(n: int) -> int:
    return 2 * n


@pytest.mark.parametrize("siblings", [1, 2])
def test_an_idle_worker_ends_when_told_not_killed(siblings, monkeypatch):
    # Forked workers hold copies of each other's (and their own) parent ends of the pipes, so
    # closing the pipe is no end-of-file for them: stop() must tell an idle worker to end,
    # or every run waits out the grace period and then kills it.
    import multiprocessing

    from aliaslint.workers import Worker

    context = multiprocessing.get_context("fork")
    workers = [Worker(context, _double) for _ in range(siblings)]
    for n, worker in enumerate(workers):
        assert worker.call(n, 30, lambda *why: None) == 2 * n
    kills = []
    for worker in workers:
        process = worker._process
        real_kill = process.kill

        def kill(p=process, real_kill=real_kill):
            kills.append(p)
            real_kill()

        monkeypatch.setattr(process, "kill", kill)
        worker.stop()
    assert kills == []


_SETTLED: list[int] = []  # in a worker: the answers sent before each `after()`


def _answer_and_settled(n: int) -> tuple[int, list[int]]:
    return 2 * n, list(_SETTLED)


def _settle_after() -> None:
    _SETTLED.append(len(_SETTLED))


def test_a_workers_after_runs_once_each_answer_is_sent():
    """The language server's worker collects its garbage after sending the diagnostics, not
    before: `after()` runs in the worker after each answer, and the answer does not wait
    for it."""
    import multiprocessing

    from aliaslint.workers import Worker

    worker = Worker(multiprocessing.get_context("fork"), _answer_and_settled,
                    after=_settle_after)
    try:
        answers = [worker.call(n, 30, lambda *why: why) for n in range(3)]
    finally:
        worker.stop()
    assert answers == [(0, []), (2, [0]), (4, [0, 1])]
    assert _SETTLED == []  # it ran in the worker, not here


def _pid_after(n: int) -> tuple[int, int]:
    import time

    time.sleep(0.02)
    return n, os.getpid()


def test_workers_serve_their_own_stretch_of_the_requests_after_the_shared_ones():
    """Requests next to each other run in one process (what they share stays kept there);
    the shared head goes to whichever worker is free; every answer comes back in order."""
    import multiprocessing

    from aliaslint.workers import run_all

    context = multiprocessing.get_context("fork")
    answers = run_all(list(range(24)), _pid_after, 2, timeout=lambda n: 60,
                      failure=lambda *why: None, context=context, shared=4)
    assert [n for n, _ in answers] == list(range(24))
    pid = {n: process for n, process in answers}
    # After the four shared ones, 4-13 and 14-23 are the two stretches, each begun by its
    # own worker and served in order (a worker done with its own takes the other's last).
    assert pid[4] != pid[14]
    assert pid[4] == pid[5] == pid[6] and pid[14] == pid[15] == pid[16]
    assert len(set(pid.values())) == 2
    assert [n for n, _ in run_all(list(range(5)), _pid_after, 3, timeout=lambda n: 60,
                                  failure=lambda *why: None, context=context)] == list(range(5))
