"""The coverage check of the op tables (benchmarks/op_coverage.py): every torch callable the
benchmark corpora call has a table entry, an engine model or a recorded reason."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import benchmark_script

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "op_coverage.py"
coverage = benchmark_script("op_coverage")


def test_every_used_callable_is_covered_or_has_a_reason():
    result = subprocess.run([sys.executable, str(SCRIPT), "check"], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "names:" in result.stdout


def test_the_recorded_list_is_the_corpora_s():
    data = coverage._load()
    used = data["used"]
    assert len(used) > 300
    for name in ("torch.cat", "torch.nn.Linear", "torch.nn.functional.relu", "torch.no_grad"):
        assert name in used


def test_a_missing_entry_and_a_stale_reason_are_reported():
    data = {"reasons": {"torch.cat": "no reason"}, "patterns": {}}
    found = list(coverage.problems({"torch.not_a_real_op": 3, "torch.cat": 9}, data))
    assert found == [
        "torch.not_a_real_op: used in 3 files, no table entry and no recorded reason",
        "torch.cat: has a table entry now; drop its recorded reason",
    ]


def test_import_aliases_resolve_to_qualified_names():
    source = """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import nn as tnn, cat
from torch.nn import functional as G, Linear
from torch.nn.modules.conv import Conv2d
import torch.distributed as dist

torch.exp(x)
nn.ReLU(inplace=True)
F.relu(x)
tnn.LayerNorm(4)
cat([a, b])
G.gelu(x)
Linear(2, 3)
Conv2d(1, 2, 3)
dist.all_reduce(x)
torch._C._nn.gelu(x)
x.add_(1)
"""
    assert coverage.calls_in(source) == {
        "torch.exp", "torch.nn.ReLU", "torch.nn.functional.relu", "torch.nn.LayerNorm",
        "torch.cat", "torch.nn.functional.gelu", "torch.nn.Linear", "torch.nn.Conv2d",
    }
