"""What a run says about fixes its settings leave out: `--statistics` marks a code fixable
only when this run would apply a fix of it, and `--diff` says how many `--unsafe-fixes` adds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from aliaslint.cli import main

ROOT = Path(__file__).resolve().parent.parent

# AL105, whose only fix (`inplace=False`) is unsafe: it changes what `forward` returns.
PRE_ACT = '''\
import torch
import torch.nn as nn


class PreActBlock(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.act = nn.ReLU(inplace=True)
        self.fc = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x
        out = self.act(x)
        return self.fc(out) + identity
'''
HIDDEN = "1 hidden fix can be enabled with the `--unsafe-fixes` option"


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["check", "--isolated", "--no-cache", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_statistics_marks_fixable_only_what_the_settings_apply(project, capsys):
    (project / "block.py").write_text(PRE_ACT)
    assert run(capsys, "--statistics") == (
        1, f"1\tAL105\tinplace-activation-clobbers-input\n{HIDDEN}.\n", "")
    assert run(capsys, "--statistics", "--unsafe-fixes") == (
        1, "1\tAL105\t[*] inplace-activation-clobbers-input\n"
        "[*] fixable with the `--fix` option\n", "")
    for options, fixable in (((), False), (("--unsafe-fixes",), True)):
        code, out, _ = run(capsys, "--statistics", "--output-format", "json", *options)
        assert json.loads(out) == [{"code": "AL105", "name": "inplace-activation-clobbers-input",
                                    "count": 1, "fixable": fixable}]


def test_diff_with_only_unsafe_fixes_says_how_many_would_apply(project, capsys):
    (project / "block.py").write_text(PRE_ACT)
    assert run(capsys, "--diff", "block.py") == (0, "", f"No fixes available ({HIDDEN}).\n")
    code, out, err = run(capsys, "--diff", "--unsafe-fixes", "block.py")
    assert (code, err) == (1, "Would fix 1 finding.\n")
    assert "-        self.act = nn.ReLU(inplace=True)\n" in out
    assert (project / "block.py").read_text() == PRE_ACT


def test_diff_of_standard_input_with_only_unsafe_fixes(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "aliaslint", "check", "--isolated", "--diff",
         "--stdin-filename", "block.py", "-"], input=PRE_ACT, capture_output=True, text=True,
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (
        0, "", f"No fixes available ({HIDDEN}).\n")
