"""Adopting the linter on existing code: `--add-noqa`, and a baseline (`--write-baseline`,
`--baseline`) whose findings stay matched while the code around them moves."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from aliaslint.cli import main

ROOT = Path(__file__).resolve().parent.parent

# A training script of the kind a team inherits: a leaf parameter written in place (once in
# a call whose argument is a multi-line string, once on a line a backslash continues), and
# two sharing checks on one line that already carries a comment and another linter's noqa.
LEGACY = '''\
import torch

w = torch.ones(3, requires_grad=True)
w.add_(len("""
padding
"""))
w.mul_(2) ; scale = 1 + \\
    2
print(id(w) == id(w[1:]), w.storage())  # keep  # noqa: E501
'''

NOQA_ADDED = '''\
import torch

w = torch.ones(3, requires_grad=True)
w.add_(len("""
padding
"""))  # noqa: AL102
w.mul_(2) ; scale = 1 + \\
    2  # noqa: AL102
print(id(w) == id(w[1:]), w.storage())  # keep  # noqa: AL401, AL404, E501
'''


def check(capsys, *args: str) -> tuple[int, list[str], str]:
    """Exit code, the concise findings as `path:row:CODE`, and standard error."""
    code = main(["check", "--no-cache", "--isolated", "--output-format", "concise", *args])
    out, err = capsys.readouterr()
    findings = [":".join(line.split(":")[:2]) + ":" + line.split()[1]
                for line in out.splitlines()[:-1] if line.strip()]
    return code, findings, out.splitlines()[-1] if out else err


def test_add_noqa_puts_each_code_where_ruff_does_and_merges(project, capsys):
    path = project / "train.py"
    path.write_text(LEGACY)
    assert check(capsys)[1] == ["train.py:4:AL102", "train.py:7:AL102", "train.py:9:AL401",
                                "train.py:9:AL404"]
    assert main(["check", "--no-cache", "--isolated", "--add-noqa"]) == 0
    assert "Added noqa for 4 findings in 1 file." in capsys.readouterr().err
    assert path.read_text() == NOQA_ADDED
    # Clean, with no suppression left unused; and a second run changes nothing.
    assert check(capsys, "--report-unused-suppressions") == (
        0, [], "All checks passed! (1 file checked)")
    assert main(["check", "--no-cache", "--isolated", "--add-noqa"]) == 0
    assert "Added noqa for 0 findings in 0 files." in capsys.readouterr().err
    assert path.read_text() == NOQA_ADDED


HELPERS = '''\
import torch


def gate(x):
    return torch.sigmoid(x)


def clip(boxes, width):
    boxes[:, 0].clamp_(min=0, max=width)
    return boxes
'''
TRAIN = '''\
import torch

from helpers import clip, gate

w = torch.randn(4, 4, requires_grad=True)
g = gate(w)
g.mul_(2)
g.sum().backward()
proposals = torch.rand(8, 4) * 40
clipped = clip(proposals, 32)
print(proposals.max(), clipped.max())
'''


def test_add_noqa_and_fix_see_what_the_whole_program_check_saw(project, capsys):
    """A finding the check makes from an imported helper's summary (the save `gate` makes,
    the write inside `clip` that a caller's check finds) gets its suppression too."""
    (project / "helpers.py").write_text(HELPERS)
    (project / "train.py").write_text(TRAIN)
    assert check(capsys)[1] == ["helpers.py:9:AL208", "train.py:7:AL101"]
    assert main(["check", "--no-cache", "--isolated", "--add-noqa"]) == 0
    assert "Added noqa for 2 findings in 2 files." in capsys.readouterr().err
    assert "boxes[:, 0].clamp_(min=0, max=width)  # noqa: AL208\n" in \
        (project / "helpers.py").read_text()
    assert "g.mul_(2)  # noqa: AL101\n" in (project / "train.py").read_text()
    assert check(capsys) == (0, [], "All checks passed! (2 files checked)")
    # The noqa in helpers.py silences a finding only train.py's check makes: it is used.
    assert check(capsys, "--report-unused-suppressions") == (
        0, [], "All checks passed! (2 files checked)")


def test_a_suppression_used_by_another_files_check_is_not_unused(project, capsys):
    """`helpers.py`'s noqa is used by `train.py`'s check; from the cache too, and when
    `--fix` checks `helpers.py` again.  Checked alone, helpers.py makes no such finding."""
    (project / "helpers.py").write_text(HELPERS.replace(
        "max=width)", "max=width)  # noqa: AL208").replace(
        "return torch.sigmoid(x)", "return torch.sigmoid(x)  # noqa: AL101"))
    (project / "train.py").write_text(TRAIN.replace("g.mul_(2)", "g.mul_(2)  # noqa: AL101"))
    cached = ["check", "--isolated", "--output-format", "concise",
              "--report-unused-suppressions"]
    for _ in range(2):  # analysed, then (helpers.py) from the cache
        assert main(cached) == 1
        assert [line.split()[:2] for line in capsys.readouterr().out.splitlines()[:-1]] == [
            ["helpers.py:5:30:", "AL901"]]
    # `--fix` edits helpers.py (a fix of its own) and checks it again, alone.
    with (project / "helpers.py").open("a") as helpers:
        helpers.write("SCRATCH = torch.zeros(1)\nprint(SCRATCH.storage().data_ptr())\n")
    assert main([*cached, "--select", "ALL", "--fix"]) == 1
    out = capsys.readouterr().out
    assert [line.split()[:2] for line in out.splitlines()[:-1]] == [
        ["helpers.py:5:30:", "AL901"]]
    assert "print(SCRATCH.untyped_storage().data_ptr())" in (project / "helpers.py").read_text()
    code, findings, _ = check(capsys, "--report-unused-suppressions", "helpers.py")
    assert (code, findings) == (1, ["helpers.py:5:AL901", "helpers.py:9:AL901"])


def test_add_noqa_keeps_line_endings_and_an_ignore_list(project, capsys):
    path = project / "m.py"
    path.write_bytes(b"import torch\r\nx = torch.zeros(3)\r\n"
                     b"print(x.storage())  # aliaslint: ignore[AL401]\r\n")
    assert main(["check", "--no-cache", "--isolated", "--add-noqa"]) == 0
    assert path.read_bytes() == (b"import torch\r\nx = torch.zeros(3)\r\n"
                                 b"print(x.storage())  # aliaslint: ignore[AL401, AL404]\r\n")
    capsys.readouterr()
    code, findings, _ = check(capsys, "--report-unused-suppressions")
    assert (code, findings) == (1, ["m.py:3:AL901"])  # the AL401 the user wrote stays theirs


def test_add_noqa_edits_notebook_cells_and_keeps_the_json_layout(project, capsys):
    original = ROOT / "fixtures" / "notebooks" / "explore_storage.ipynb"
    path = project / "explore.ipynb"
    shutil.copy(original, path)
    code, before, _ = check(capsys)
    assert code == 1 and len(before) == 6  # on four lines of three cells
    assert main(["check", "--no-cache", "--isolated", "--add-noqa"]) == 0
    assert "Added noqa for 6 findings in 1 file." in capsys.readouterr().err
    assert check(capsys, "--report-unused-suppressions")[:2] == (0, [])
    old, new = original.read_text().splitlines(), path.read_text().splitlines()
    assert len(old) == len(new)
    changed = [(a, b) for a, b in zip(old, new) if a != b]
    assert len(changed) == 4  # the four lines with findings, nothing else
    for a, b in changed:
        stem = a[:-len('\\n",')] if a.endswith('\\n",') else a[:-1]
        assert b.startswith(stem + "  # noqa: AL")
    assert json.loads(path.read_text())["metadata"] == json.loads(original.read_text())[
        "metadata"]


def test_add_noqa_does_not_go_with_fix_or_standard_input(project, capsys):
    (project / "m.py").write_text(LEGACY)
    assert main(["check", "--add-noqa", "--fix"]) == 2
    assert "--add-noqa cannot be used with --fix" in capsys.readouterr().err
    assert main(["check", "--add-noqa", "-"]) == 2
    assert "--add-noqa needs files, not standard input" in capsys.readouterr().err


# --- baseline -------------------------------------------------------------------------------

MODEL = '''\
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.proj(x).sigmoid()
        h.mul_(2)
        return h


def clip(w):
    with torch.no_grad():
        w.clamp_(-1, 1)


def same_memory(a: torch.Tensor, b: torch.Tensor) -> bool:
    return id(a.storage()) == id(b.storage())
'''


def git(project: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=project, check=True, capture_output=True)


@pytest.fixture
def repo(project):
    git(project, "init", "-q")
    git(project, "config", "user.email", "dev@example.com")
    git(project, "config", "user.name", "dev")
    (project / "src").mkdir()
    (project / "src" / "model.py").write_text(MODEL)
    git(project, "add", "-A")
    git(project, "commit", "-qm", "model")
    return project


def test_a_recorded_finding_survives_moves_reformatting_and_git_mv(repo, capsys):
    assert check(capsys)[1] == ["src/model.py:12:AL101", "src/model.py:22:AL401",
                                "src/model.py:22:AL404", "src/model.py:22:AL404"]
    assert main(["check", "--no-cache", "--isolated", "--write-baseline", "baseline.json"]) == 0
    assert "Recorded 4 findings in baseline.json." in capsys.readouterr().err
    recorded = json.loads((repo / "baseline.json").read_text())["findings"]
    assert [(r["code"], r["file"], r["line"]) for r in recorded] == [
        ("AL101", "src/model.py", 12), ("AL401", "src/model.py", 22),
        ("AL404", "src/model.py", 22), ("AL404", "src/model.py", 22)]
    assert check(capsys, "--baseline", "baseline.json") == (
        0, [], "All checks passed! (1 file checked; 4 findings in the baseline left out)")

    # 20 lines above, another function reformatted, the file moved with git.
    source = (repo / "src" / "model.py").read_text()
    source = source.replace("from torch import nn\n", "from torch import nn\n"
                            + "".join(f"SETTING_{i} = {i}\n" for i in range(20)))
    source = source.replace("def clip(w):\n    with torch.no_grad():\n        w.clamp_(-1, 1)",
                            "def clip(w, low=-1, high=1):\n\n    with torch.no_grad():\n"
                            "        w.clamp_(low,\n                 high)")
    (repo / "src" / "model.py").write_text(source)
    git(repo, "mv", "src/model.py", "src/blocks.py")
    assert check(capsys)[1] == ["src/blocks.py:32:AL101", "src/blocks.py:44:AL401",
                                "src/blocks.py:44:AL404", "src/blocks.py:44:AL404"]
    assert check(capsys, "--baseline", "baseline.json") == (
        0, [], "All checks passed! (1 file checked; 4 findings in the baseline left out)")

    # The hazard's own line changes: that finding is new, the others stay recorded.
    changed = source.replace("        h.mul_(2)\n", "        h.mul_(0.5)\n")
    (repo / "src" / "blocks.py").write_text(changed)
    code, findings, last = check(capsys, "--baseline", "baseline.json")
    assert (code, findings) == (1, ["src/blocks.py:32:AL101"])
    assert last == "Found 1 finding in 1 of 1 file; 3 findings in the baseline left out."


def test_a_copied_file_s_findings_are_new(repo, capsys):
    main(["check", "--no-cache", "--isolated", "--write-baseline", "baseline.json"])
    shutil.copy(repo / "src" / "model.py", repo / "src" / "copy.py")
    capsys.readouterr()
    code, findings, _ = check(capsys, "--baseline", "baseline.json")
    assert (code, findings) == (1, ["src/copy.py:12:AL101", "src/copy.py:22:AL401",
                                    "src/copy.py:22:AL404", "src/copy.py:22:AL404"])


def test_the_configured_baseline_and_its_errors(repo, capsys):
    (repo / "pyproject.toml").write_text('[tool.aliaslint]\nbaseline = "ci/known.json"\n')
    (repo / "ci").mkdir()
    assert main(["check", "--no-cache"]) == 2
    assert ("baseline ci/known.json: no such file (make it with `aliaslint check "
            "--write-baseline FILE`)") in capsys.readouterr().err.replace(str(repo) + "/", "")
    assert main(["check", "--no-cache", "--write-baseline", "ci/known.json"]) == 0
    capsys.readouterr()
    assert main(["check", "--no-cache", "--output-format", "concise"]) == 0
    assert main(["check", "--no-cache", "--output-format", "concise", "--no-baseline"]) == 1
    assert main(["check", "--show-settings", "src"]) == 0
    assert 'baseline = "ci/known.json"' in capsys.readouterr().out
    (repo / "ci" / "known.json").write_text("[]")
    assert main(["check", "--no-cache"]) == 2
    assert "not an aliaslint baseline" in capsys.readouterr().err


# --- settings and quiet ------------------------------------------------------------------


def test_show_settings_prints_resolved_values(project, capsys):
    (project / "pyproject.toml").write_text(
        '[tool.aliaslint]\ncache-dir = "build/lint"\ntarget-version = "py310"\n'
        'select = ["AL4"]\nignore = ["AL402"]\n')
    assert main(["check", "--show-settings"]) == 0
    out = capsys.readouterr().out
    assert 'cache-dir = "build/lint"\n' in out
    assert 'target-version = "py310"\n' in out
    assert 'rules = ["AL401", "AL403", "AL404", "AL902", "AL903"]\n' in out
    keys = [line.split(" = ")[0] for line in out.splitlines()[2:]]
    assert keys == ["exclude", "extend-exclude", "include", "extend-include", "per-file-ignores",
                    "respect-gitignore", "cache-dir", "max-file-size", "confidence",
                    "report-unused-suppressions", "target-version", "unsafe-fixes", "fixable",
                    "unfixable", "extend-safe-fixes", "extend-unsafe-fixes", "rules"]
    assert "none" not in out
    (project / "pyproject.toml").write_text("[tool.aliaslint]\n")
    assert main(["check", "--show-settings"]) == 0
    out = capsys.readouterr().out
    assert 'cache-dir = ".aliaslint_cache"\n' in out
    assert "target-version = \"py3" in out and "none" not in out


@pytest.mark.slow
def test_check_trace_quiet_prints_the_findings_only(project, capsys):
    (project / "prog.py").write_text(
        "import torch\n\n\ndef same(a, b):\n    return a is b\n\n\n"
        "print(same(torch.zeros(2), torch.zeros(2)))\n")
    assert main(["check", "--trace", "-q", "--output-format", "concise", "prog.py"]) == 1
    err = capsys.readouterr().err
    assert "prog.py:5:12: AL402 [confirmed]" in err
    assert "aliaslint check --trace:" not in err


def test_fix_with_a_baseline_reports_only_what_is_new(repo, capsys):
    main(["check", "--no-cache", "--isolated", "--write-baseline", "baseline.json"])
    source = (repo / "src" / "model.py").read_text()
    (repo / "src" / "model.py").write_text(
        source.replace("h.mul_(2)", "h.mul_(2)\n        h.add_(1)"))
    capsys.readouterr()
    code = main(["check", "--no-cache", "--isolated", "--output-format", "concise",
                 "--baseline", "baseline.json", "--fix"])
    out = capsys.readouterr().out
    assert code == 1
    assert out.startswith(
        "src/model.py:13:9: AL101 `h.add_(1)` overwrites `h`, saved for backward by "
        "`self.proj(x).sigmoid()`; backward of the output (line 14) will raise\n"
        "Found 1 finding (0 fixed, 1 remaining).\n")


def test_a_file_whose_name_does_not_decode_is_recorded_and_matched(repo, capsys):
    # A name of bytes the file system's encoding does not decode (Latin-1 `é` on a UTF-8
    # system): Python holds it with a lone surrogate, which the baseline writes as an escape.
    source = (repo / "src" / "model.py").read_bytes()
    try:
        with open(os.path.join(os.fsencode(repo / "src"), b"caf\xe9.py"), "wb") as out:
            out.write(source)
    except OSError:
        pytest.skip("this file system takes only names of its own encoding")
    assert main(["check", "--no-cache", "--isolated", "--write-baseline", "baseline.json"]) == 0
    assert "Recorded 8 findings in baseline.json." in capsys.readouterr().err
    recorded = json.loads((repo / "baseline.json").read_bytes())["findings"]
    assert {r["file"] for r in recorded} == {"src/model.py", "src/caf\udce9.py"}
    assert check(capsys, "--baseline", "baseline.json") == (
        0, [], "All checks passed! (2 files checked; 8 findings in the baseline left out)")
    # Every report names it (SARIF by its bytes, percent-encoded).
    for output in ("full", "concise", "json", "sarif", "github", "gitlab", "html"):
        written = repo / f"report.{output}"
        assert main(["check", "--no-cache", "--isolated", "--output-format", output,
                     "--output", str(written)]) == 1
        assert b"caf" in written.read_bytes(), output
    sarif = json.loads((repo / "report.sarif").read_bytes())
    assert {result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for result in sarif["runs"][0]["results"]} == {"src/model.py", "src/caf%E9.py"}
