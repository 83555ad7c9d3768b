"""The coverage check of the op tables (benchmarks/op_coverage.py): every torch callable the
benchmark corpora call has a table entry, an engine model or a recorded reason.  These tests
use the stored list of names, not the corpora."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tomllib
from collections import Counter
from pathlib import Path

from conftest import benchmark_script

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "op_coverage.py"
coverage = benchmark_script("op_coverage")


def test_the_check_passes_on_the_stored_list_without_torch():
    # Run as a user would, in a fresh interpreter, and make sure torch was never imported.
    program = (
        "import runpy, sys\n"
        f"sys.argv = [{str(SCRIPT)!r}, 'check']\n"
        "try:\n"
        f"    runpy.run_path({str(SCRIPT)!r}, run_name='__main__')\n"
        "except SystemExit as exit:\n"
        "    print('exit', exit.code)\n"
        "print('torch imported' if 'torch' in sys.modules else 'torch not imported')\n"
    )
    result = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True,
                            text=True, timeout=300)
    assert "exit 0" in result.stdout, result.stdout[-4000:] + result.stderr[-2000:]
    assert "torch not imported" in result.stdout
    assert "unaccounted" not in result.stdout


def test_every_stored_name_is_accounted_for():
    stored = coverage.Coverage.load()
    assert stored.errors == []
    assert len(stored.used) > 900  # seven corpora: about a thousand names
    for name in ("torch.cat", "torch.nn.Linear", "torch.nn.functional.relu", "torch.no_grad",
                 "torch.tensor", "torch.optim.Adam", "torch.nn.init.normal_"):
        assert name in stored.used
    unaccounted = [name for name in stored.used if stored.account(name) is None]
    assert unaccounted == []
    # ... and nothing is recorded for a name no corpus calls.
    assert set(stored.reasons) <= set(stored.used)
    assert set(stored.engine) <= set(stored.used)


def test_missing_reasons_are_the_missing_group_s():
    stored = coverage.Coverage.load()
    for name, (group, reason) in stored.reasons.items():
        in_missing = group == "missing" or group.startswith("missing-")
        assert in_missing == reason.startswith("missing: "), (name, group, reason)
    # Callables known to alias, write or save stay in the missing group until they get an entry.
    for name in ("torch.nn.Buffer", "torch.nn.init.zeros_", "torch.distributed.all_reduce",
                 "torch.FloatTensor"):
        account = stored.account(name)
        assert account is not None
        assert account.how != "reason" or coverage.is_missing(account.group), (name, account)


def test_engine_names_come_from_the_engine_s_sets():
    held = coverage.engine_sets()
    assert held["torch.compile"].endswith("training.MODULE_WRAPPERS")
    assert held["torch.utils.checkpoint.checkpoint"].endswith("training.CHECKPOINTS")
    assert held["torch.nn.Parameter"].endswith("opfacts.TENSOR_TYPES")
    assert all(name.startswith("torch.") for name in held)


def usage(files: int, calls: int):
    return coverage.Usage(files, calls)


def test_problems_unaccounted_stale_orphan_duplicate_and_wrong_prefix():
    data = {
        "engine": {"torch.nowhere": "modelled by the engine: aliaslint/analysis/calls.py"},
        "reasons": {
            "missing": {"each": {"torch.cat": "missing: stale, the table has it",
                                 "torch.foo": "not said as missing"}},
            "no-tensor": {"reason": "returns no tensor", "names": ["torch.foo", "torch.gone"]},
        },
    }
    found = list(coverage.Coverage.parse(data).problems(
        {"torch.not_a_real_op": usage(3, 7), "torch.cat": usage(9, 9), "torch.foo": usage(1, 1)}))
    assert found == [
        "torch.foo: reasons start with 'missing: ' in the missing(-*) groups and only there "
        "(missing: 'not said as missing')",
        "torch.foo: two reasons (missing, no-tensor)",
        "torch.nowhere: aliaslint/analysis/calls.py no longer spells it (nor a prefix of it); "
        "is it still modelled?",
        "torch.not_a_real_op: 7 calls in 3 files; no table entry, not modelled by the engine, "
        "no recorded reason",
        "torch.cat: has a table entry now; drop its recorded reason",
        "torch.gone: recorded, but no corpus calls it; drop it",
        "torch.nowhere: recorded, but no corpus calls it; drop it",
    ]


def test_an_engine_line_may_name_a_prefix_the_module_spells():
    data = {"engine": {"torch.optim.Adam": "modelled by the engine: aliaslint/analysis/calls.py"}}
    parsed = coverage.Coverage.parse(data)
    assert parsed.errors == []
    account = parsed.account("torch.optim.Adam")
    assert account is not None and account.how == "engine"


IMPORT_FORMS = """
import torch
import torch as th
import torch.nn as nn
import torch.nn.functional as F
from torch import nn as tnn, cat
from torch.nn import functional as G, Linear
from torch.nn.modules.conv import Conv2d
import torch.distributed as dist
import numpy as np
from torch.utils.checkpoint import checkpoint
from torch.nn.functional import *  # unknown names: not counted

torch.exp(x)
th.zeros(3)
nn.ReLU(inplace=True)
F.relu(x)
F.relu(y)
tnn.LayerNorm(4)
cat([a, b])
G.gelu(x)
Linear(2, 3)
Conv2d(1, 2, 3)
dist.all_reduce(x)
torch.nn.init.zeros_(w)
checkpoint(f, x)
torch._C._nn.gelu(x)
np.exp(x)
x.add_(1)
softmax(x)
Lin = nn.Linear
Lin(1, 1)
with torch.no_grad():
    torch.cuda.synchronize()


@torch.no_grad()
def f(F, x):
    F.relu(x)  # a parameter named F hides the alias
    return nn.Dropout()(x)


@torch.jit.script
def g(x):
    return lambda nn: nn.Tanh()


class M(nn.Module):
    def forward(self, x):
        import torch.nn.functional as H
        return H.silu(x)


for F in range(3):
    F.relu(x)  # rebound by the loop
torch.nn.functional.softmax(x, dim=-1)
"""


def test_the_scanner_resolves_import_aliases():
    assert coverage.calls_in(textwrap.dedent(IMPORT_FORMS)) == Counter({
        "torch.exp": 1, "torch.zeros": 1, "torch.nn.ReLU": 1, "torch.nn.functional.relu": 2,
        "torch.nn.LayerNorm": 1, "torch.cat": 1, "torch.nn.functional.gelu": 1,
        "torch.nn.Linear": 2, "torch.nn.modules.conv.Conv2d": 1, "torch.distributed.all_reduce": 1,
        "torch.nn.init.zeros_": 1, "torch.utils.checkpoint.checkpoint": 1, "torch._C._nn.gelu": 1,
        "torch.no_grad": 2, "torch.cuda.synchronize": 1, "torch.nn.Dropout": 1,
        "torch.jit.script": 1, "torch.nn.functional.silu": 1, "torch.nn.functional.softmax": 1,
    })


def test_source_that_does_not_parse_counts_nothing():
    assert coverage.calls_in("import torch\ntorch.cat(") == Counter()


def test_scan_and_write_keep_the_hand_written_parts(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.py").write_text("import torch\ntorch.cat([x])\ntorch.cat([y])\ntorch.load(p)\n")
    (corpus / "b.py").write_text("from torch import cat\ncat([x])\n")
    (corpus / "broken.py").write_text("def (:\n")
    result = coverage.scan([corpus])
    assert {name: (u.files, u.calls) for name, u in result.used.items()} == {
        "torch.cat": (2, 3), "torch.load": (1, 1)}
    assert result.unparsed == [corpus / "broken.py"]

    toml = tmp_path / "coverage.toml"
    hand = '[reasons.io]\nreason = "serialization / I/O"\nnames = ["torch.load"]\n'
    toml.write_text(hand + '\n[used]\n"torch.old" = { files = 1, calls = 1 }\n')
    for _ in range(2):  # rewriting is stable
        coverage.write_used(toml, result)
        text = toml.read_text()
        assert text.startswith(hand)
        assert text.count("[used]\n") == 1
    data = tomllib.loads(text)
    assert data["used"] == {"torch.cat": {"files": 2, "calls": 3},
                            "torch.load": {"files": 1, "calls": 1}}
    assert coverage.main(["check", "--toml", str(toml)]) == 0
