"""Jobs of several processes: DataLoader workers, torchrun ranks (gloo on localhost), children.

Every job runs in a session of its own, killed whole if a test times out, and with a
temporary directory of its own in which aliaslint must leave nothing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from aliaslint.diagnostics import Diagnostic, Position
from aliaslint.runtime.launch import Run

pytest.importorskip("torch")

ALIASLINT = [sys.executable, "-m", "aliaslint"]


@pytest.fixture
def job(tmp_path, short_tmp, monkeypatch):
    """Runs a command in tmp_path; (exit status, stdout, stderr, the JSON report if any)."""
    temporary = short_tmp
    monkeypatch.setenv("TMPDIR", str(temporary))

    def run(argv: list[str], timeout: float = 180) -> tuple[int, str, str, list | None]:
        process = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise
        report = tmp_path / "report.json"
        found = json.loads(report.read_text()) if report.exists() else None
        report.unlink(missing_ok=True)
        return process.returncode, out, err, found

    yield run
    assert [p.name for p in temporary.iterdir() if p.name.startswith("aliaslint")] == []


def placed(report: list) -> list[tuple]:
    return [(d["code"], d["location"]["row"], d.get("processes", [])) for d in report]


# --- DataLoader workers -----------------------------------------------------------------------

LOADER = """\
import sys
import torch
from torch.utils.data import DataLoader, Dataset


class Squares(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        x = torch.full((3,), float(i), requires_grad=True)
        y = x.exp()
        y.mul_(2)
        try:
            y.sum().backward()
        except RuntimeError:
            pass
        return y.detach()


def main():
    loader = DataLoader(Squares(), batch_size=2, num_workers=2,
                        multiprocessing_context=sys.argv[1])
    total = sum(batch.sum().item() for batch in loader)
    w = torch.ones(2, requires_grad=True)
    h = w.sigmoid()
    h.add_(1)
    try:
        h.sum().backward()
    except RuntimeError:
        pass
    print("total", round(total, 3))


if __name__ == "__main__":
    main()
"""


@pytest.mark.slow
@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_dataloader_workers_are_traced_and_named(job, tmp_path, method):
    (tmp_path / "loader.py").write_text(LOADER)
    status, plain, _, _ = job([sys.executable, "loader.py", method])
    assert status == 0
    status, out, err, report = job([*ALIASLINT, "trace", "--output-format", "json", "-o",
                                    "report.json", "loader.py", method])
    assert out == plain == "total 10405.597\n"
    assert status == 1, err
    assert placed(report) == [("AL101", 13, ["worker 0", "worker 1"]), ("AL101", 27, ["main"])]


@pytest.mark.slow
def test_text_report_names_the_processes(job, tmp_path):
    (tmp_path / "loader.py").write_text(LOADER)
    status, _, err, _ = job([*ALIASLINT, "trace", "--output-format", "concise", "loader.py",
                             "fork"])
    assert status == 1
    assert "loader.py:13:9: AL101 " in err and "(in worker 0, worker 1)\n" in err


# --- other children ---------------------------------------------------------------------------

CHILD = """\
import multiprocessing


def work():
    import torch
    x = torch.randn(3, requires_grad=True)
    y = x.exp()
    y.add_(1)
    try:
        y.sum().backward()
    except RuntimeError:
        pass


if __name__ == "__main__":
    child = multiprocessing.get_context(%r).Process(target=work)
    child.start()
    child.join()
    print("child exit", child.exitcode)
"""


@pytest.mark.slow
@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_a_child_is_traced_when_asked(job, tmp_path, method):
    (tmp_path / "parent.py").write_text(CHILD % method)
    command = ["trace", "--output-format", "json", "-o", "report.json"]
    status, out, err, report = job([*ALIASLINT, *command, "parent.py"])
    assert (status, out, report) == (0, "child exit 0\n", []), err
    status, out, err, report = job([*ALIASLINT, *command, "--follow-children", "parent.py"])
    assert (status, out) == (1, "child exit 0\n"), err
    assert placed(report) == [("AL101", 8, [f"{method.capitalize()}Process-1"])]


# --- torchrun ---------------------------------------------------------------------------------

RANKS = """\
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
w = torch.randn(4, requires_grad=True)
h = w.sigmoid()
if rank == 1:
    h.mul_(2)
    try:
        h.sum().backward()
    except RuntimeError:
        pass
t = torch.ones(2) * (rank + 1)
dist.all_reduce(t)
print(f"rank {rank}: {t.tolist()}\\n", end="", flush=True)
dist.destroy_process_group()
"""


@pytest.mark.slow
def test_two_ranks_under_nproc_per_node(job, tmp_path):
    (tmp_path / "ranks.py").write_text(RANKS)
    status, out, err, report = job([*ALIASLINT, "trace", "--nproc-per-node", "2",
                                    "--output-format", "json", "-o", "report.json", "ranks.py"])
    assert sorted(out.splitlines()) == ["rank 0: [3.0, 3.0]", "rank 1: [3.0, 3.0]"], err
    assert status == 1
    assert placed(report) == [("AL101", 9, ["rank 1"])]


@pytest.mark.slow
def test_torchrun_running_aliaslint_gives_one_report_per_node(job, tmp_path):
    (tmp_path / "ranks.py").write_text(RANKS)
    status, out, err, report = job([
        sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
        "--log-dir", str(tmp_path / "logs"), "-m", "aliaslint", "trace", "--output-format",
        "json", "-o", "report.json", "ranks.py"])
    assert sorted(out.splitlines()) == ["rank 0: [3.0, 3.0]", "rank 1: [3.0, 3.0]"], err
    assert status == 1  # the rank that reported found something
    assert placed(report) == [("AL101", 9, ["rank 1"])]


SHARING = """\
import torch
import torch.distributed as dist


def same_memory(a: torch.Tensor, b: torch.Tensor) -> bool:
    return id(a) == id(b)


dist.init_process_group("gloo")
if dist.get_rank() == 1:
    t = torch.ones(4)
    same_memory(t, t[:2])
dist.barrier()
dist.destroy_process_group()
"""


@pytest.mark.slow
def test_check_trace_across_ranks(job, tmp_path):
    (tmp_path / "sharing.py").write_text(SHARING)
    status, _, err, report = job([*ALIASLINT, "check", "--trace", "--nproc-per-node", "2",
                                  "--output-format", "json", "-o", "report.json", "sharing.py"])
    assert status == 1, err
    # Not reached on rank 0, confirmed on rank 1.
    assert [(d["code"], d["location"]["row"], d["status"]) for d in report] == [
        ("AL401", 6, "confirmed")]


# --- merging ----------------------------------------------------------------------------------


def finding(row: int, status=None) -> dict:
    return Diagnostic("AL101", "m", "/p.py", Position(row, 1), Position(row, 5),
                      status=status).to_json()


def test_findings_merge_per_location_with_ranks_in_numeric_order():
    run = Run(0, [{"label": f"rank {rank}", "findings": [finding(3)] + [finding(7)] * (rank == 2)}
                  for rank in (10, 2, 1)])
    assert [(d.location.row, d.processes) for d in run.findings()] == [
        (3, ("rank 1", "rank 2", "rank 10")), (7, ("rank 2",))]


def test_one_process_findings_name_no_process():
    assert [d.processes for d in Run(0, [{"label": "main", "findings": [finding(3)]}]
                                    ).findings()] == [()]


def test_a_static_finding_takes_its_best_status_over_the_ranks():
    run = Run(0, [{"label": "rank 0", "confirmation": [{**finding(3, "refuted"), "note": "a"}]},
                  {"label": "rank 1", "confirmation": [{**finding(3, "confirmed"), "note": "b"}]},
                  {"label": "rank 2", "confirmation": [{**finding(3, "not-reached")}]}])
    diagnostics, notes, _ = run.confirmation()
    assert [(d.status, notes[id(d)]) for d in diagnostics] == [("confirmed", "b")]
