"""Fixes: the edits each rule proposes, and how `check --fix` / `--diff` apply them."""

from __future__ import annotations

import codecs
import json
import subprocess
import sys
from pathlib import Path

import pytest

from aliaslint import registry
from aliaslint.cli import main
from aliaslint.diagnostics import Diagnostic, Edit, Fix, Position
from aliaslint.engine import check_notebook, check_source
from aliaslint.fixes import apply_edits, fix_file, fix_text

ALL = sorted(registry.rules())

TRAIN = '''\
"""A training step with every kind of fix."""
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Linear(4, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(8, 4)
best = model.state_dict()
probs = torch.softmax(model(x), dim=1)
target = probs.detach()
target.pow_(2)
loss = -(target * probs.log()).sum()
loss.backward()
opt.step()
grid = torch.zeros(3, 4)
same = grid.storage().data_ptr() == grid[1:].storage().data_ptr()
print(best["weight"], same)
flat = x.t().view(-1)
print(flat.sum())
'''


def fixed(source: str, *, unsafe: bool) -> str:
    allowed = {"safe", "unsafe"} if unsafe else {"safe"}
    return fix_text(source, "t.py", lambda text: check_source(text, "t.py", ALL),
                    lambda d: d.fix is not None and d.fix.applicability in allowed).text


def test_safe_fixes_change_only_certain_failures():
    after = fixed(TRAIN, unsafe=False)
    assert after.splitlines()[16:20] == [
        "grid = torch.zeros(3, 4)",
        "same = grid.untyped_storage().data_ptr() == grid[1:].untyped_storage().data_ptr()",
        'print(best["weight"], same)',
        "flat = x.t().reshape(-1)",
    ]
    assert "best = model.state_dict()" in after and "target.pow_(2)" in after


def test_unsafe_fixes_remove_every_fixable_finding_and_a_second_pass_changes_nothing():
    after = fixed(TRAIN, unsafe=True)
    assert after.startswith('"""A training step with every kind of fix."""\nimport copy\n')
    assert "best = copy.deepcopy(model.state_dict())" in after
    assert "target = target.pow(2)" in after
    assert [d.code for d in check_source(after, "t.py", ALL)] == []
    assert fixed(after, unsafe=True) == after


@pytest.mark.slow
def test_the_fixed_program_runs_without_the_hazard(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(fixed(TRAIN, unsafe=True))
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_apply_edits_replaces_spans_and_inserts():
    text = "ab\ncd\n"
    edits = [Edit("X", Position(1, 2), Position(2, 2)), Edit("top\n", Position(1, 1),
                                                              Position(1, 1))]
    assert apply_edits(text, edits) == "top\naXd\n"


def _diagnostic(edit: Edit, applicability="safe") -> Diagnostic:
    return Diagnostic("AL404", "m", "t.py", edit.location, edit.end_location,
                      fix=Fix("f", applicability, (edit,)))


def test_a_fix_that_would_not_compile_is_dropped_and_said():
    text = "x = 1\n"
    broken = _diagnostic(Edit("x = = 2", Position(1, 1), Position(1, 6)))
    outcome = fix_text(text, "t.py", lambda t: [broken] if t == text else [], lambda d: True)
    assert outcome.text == text and not outcome.fixed
    assert outcome.dropped and "would not compile" in outcome.dropped[0]


def test_overlapping_fixes_wait_for_the_next_pass():
    text = "x = a\n"
    first = _diagnostic(Edit("b", Position(1, 5), Position(1, 6)))
    second = _diagnostic(Edit("y = a", Position(1, 1), Position(1, 6)))
    seen = []

    def check(t):
        seen.append(t)
        return [first, second] if t == text else []

    outcome = fix_text(text, "t.py", check, lambda d: True)
    assert outcome.text == "y = a\n" and sum(outcome.fixed.values()) == 1


@pytest.mark.parametrize("bom,newline", [(b"", "\n"), (codecs.BOM_UTF8, "\r\n")])
def test_fix_keeps_bom_and_line_endings(tmp_path, bom, newline):
    path = tmp_path / "m.py"
    source = TRAIN.replace("\n", newline)
    path.write_bytes(bom + source.encode())

    def check(text):
        return check_source(text, "m.py", ALL)

    result = fix_file(path, "m.py", check, lambda d: d.fix is not None and
                      d.fix.applicability != "display-only", write=True)
    assert result is not None and result.outcome is not None and result.outcome.fixed
    data = path.read_bytes()
    assert data.startswith(bom + b'"""')
    body = data[len(bom):].decode()
    assert body.count("\n") == body.count(newline) if newline == "\r\n" else "\r" not in body
    assert "import copy" + newline in body


def test_a_file_changed_during_the_fix_is_not_overwritten(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(TRAIN)

    def check(text):
        path.write_text(TRAIN + "# edited meanwhile\n")
        return check_source(text, "m.py", ALL)

    result = fix_file(path, "m.py", check, lambda d: d.fix is not None, write=True)
    assert result is not None and result.not_written
    assert path.read_text().endswith("# edited meanwhile\n")


def run(capsys, *args) -> tuple[int, str, str]:
    code = main(["check", "--isolated", "--no-cache", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_diff_writes_nothing_and_exits_1(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("m.py").write_text(TRAIN)
    code, out, err = run(capsys, "--diff", "m.py")
    assert code == 1 and Path("m.py").read_text() == TRAIN
    assert "-flat = x.t().view(-1)\n+flat = x.t().reshape(-1)\n" in out
    assert err.endswith("Would fix 3 findings (2 hidden fixes can be enabled with the "
                        "`--unsafe-fixes` option).\n")


def test_fix_reports_what_is_left_and_what_unsafe_fixes_would_do(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("m.py").write_text(TRAIN)
    code, out, _ = run(capsys, "--fix", "--output-format", "concise", "m.py")
    assert code == 1
    assert out.splitlines()[-2:] == ["Found 5 findings (3 fixed, 2 remaining).",
                                     "2 more fixable with the `--unsafe-fixes` option."]
    code, out, _ = run(capsys, "--fix", "--unsafe-fixes", "--show-fixes", "m.py")
    assert code == 0 and "Fixed AL207 × 1 in m.py" in out
    code, out, _ = run(capsys, "--fix", "--exit-non-zero-on-fix", "m.py")
    assert code == 0 and out.startswith("All checks passed!")


def test_fix_only_reports_nothing_else(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("m.py").write_text(TRAIN)
    code, out, _ = run(capsys, "--fix-only", "--exit-non-zero-on-fix", "m.py")
    assert code == 1 and out.splitlines() == [
        "Fixed AL202 × 1 in m.py", "Fixed AL404 × 2 in m.py"]


def test_low_confidence_fixes_are_only_shown():
    source = ("import numpy as np\nimport torch\ne = torch.randn(5, 3)\na = e.cpu().numpy()\n"
              "a /= 2\nprint(e)\n")
    (finding,) = check_source(source, "t.py", ["AL301"], confidence="low")
    assert finding.fix is None or finding.fix.applicability == "display-only"


# --- What the settings allow: ruff's `fixable`, `unfixable`, `extend-(un)safe-fixes`.

def test_fix_settings_reclassify_and_withhold_fixes(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("m.py").write_text(TRAIN)
    Path("aliaslint.toml").write_text(
        'unsafe-fixes = true\nunfixable = ["AL2"]\nextend-unsafe-fixes = ["AL404"]\n'
        'extend-safe-fixes = ["AL104"]\n')
    code = main(["check", "--no-cache", "--output-format", "json", "m.py"])
    findings = {d["code"]: d["fix"]["applicability"] for d in json.loads(capsys.readouterr().out)}
    assert findings == {"AL104": "safe", "AL202": "display-only", "AL207": "display-only",
                        "AL404": "unsafe"}
    # `unsafe-fixes = true` lets --fix apply AL404's (now unsafe) fixes; AL2xx stay.
    code = main(["check", "--no-cache", "--fix", "--output-format", "concise", "m.py"])
    out = capsys.readouterr().out
    assert code == 1 and "Found 5 findings (3 fixed, 2 remaining)." in out
    fixed_text = Path("m.py").read_text()
    assert "target = target.pow(2)" in fixed_text and "untyped_storage" in fixed_text
    assert ".view(-1)" in fixed_text and "copy.deepcopy" not in fixed_text
    # The command line wins over the file (`unfixable` still applies, as in ruff).
    Path("m.py").write_text(TRAIN)
    main(["check", "--no-cache", "--fix", "--no-unsafe-fixes", "--fixable", "AL1,AL2", "m.py"])
    capsys.readouterr()
    assert Path("m.py").read_text() == TRAIN.replace("target.pow_(2)", "target = target.pow(2)")


def test_fix_settings_are_validated(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("m.py").write_text(TRAIN)
    Path("aliaslint.toml").write_text('unfixable = ["AL2O2"]\n')
    assert main(["check", "--no-cache", "m.py"]) == 2
    assert "unfixable: unknown rule selector 'AL2O2'" in capsys.readouterr().err
    Path("aliaslint.toml").write_text('unsafe-fixes = "yes"\n')
    assert main(["check", "--no-cache", "m.py"]) == 2
    assert "unsafe-fixes: expected true or false" in capsys.readouterr().err


# --- Standard input: the fixed text to standard output, what is left to standard error.

def _stdin(*args: str, source: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "aliaslint", "check", "--isolated", *args],
                          input=source.encode(), capture_output=True, cwd=cwd)


def test_fix_on_standard_input_prints_the_fixed_text(tmp_path):
    done = _stdin("--fix", "--stdin-filename", "train.py", "-", source=TRAIN, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout.decode() == fixed(TRAIN, unsafe=False)
    assert done.stderr.decode().count("train.py:") == 2  # AL101 and AL207 are unsafe
    done = _stdin("--fix", "--unsafe-fixes", "--stdin-filename", "train.py", "-",
                  source=TRAIN, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.decode() == fixed(TRAIN, unsafe=True)
    assert done.stderr == b""
    done = _stdin("--diff", "--stdin-filename", "train.py", "-", source=TRAIN, cwd=tmp_path)
    assert done.returncode == 1 and done.stdout.startswith(b"--- train.py\n+++ train.py\n")
    assert not list(tmp_path.iterdir())  # nothing written


# --- Notebooks: cell by cell, the JSON otherwise byte for byte as it was.

def _notebook(cells: list[dict], indent: int | None = 1, ascii_only: bool = False) -> str:
    document = {"cells": cells, "metadata": {"kernelspec": {
        "display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(document, indent=indent, ensure_ascii=ascii_only) + "\n"


def _code(source: list[str] | str, outputs: list | None = None) -> dict:
    return {"cell_type": "code", "execution_count": 1, "metadata": {"collapsed": False},
            "outputs": outputs or [], "source": source}


NOTEBOOK_CELLS = [
    {"cell_type": "markdown", "metadata": {}, "source": ["# Fine-tuning — résumé"]},
    _code(["%matplotlib inline\n", "import torch\n", "from torch import nn\n",
           "model = nn.Linear(4, 3)\n", "x = torch.randn(3, 4)"]),
    _code(["%%time\n", "best = model.state_dict()\n", "with torch.no_grad():\n",
           "    model.weight.mul_(2)\n", "print(best['weight'])\n", "flat = x.t().view(-1)"],
          outputs=[{"name": "stdout", "output_type": "stream", "text": ["CPU times: 1 ms\n"]}]),
    _code("g = torch.zeros(3, 4)\r\nsame = g.storage().data_ptr() == g[1:].storage().data_ptr()"),
]


@pytest.mark.parametrize("indent,ascii_only", [(1, False), (2, True)])
def test_notebook_fixed_cell_by_cell(tmp_path, capsys, monkeypatch, indent, ascii_only):
    monkeypatch.chdir(tmp_path)
    text = _notebook(NOTEBOOK_CELLS, indent, ascii_only)
    Path("nb.ipynb").write_text(text, encoding="utf-8")
    code, out, _ = run(capsys, "--fix", "--unsafe-fixes", "--output-format", "concise",
                       "nb.ipynb")
    assert code == 0 and "(4 fixed, 0 remaining)" in out
    after = Path("nb.ipynb").read_text(encoding="utf-8")
    cells = json.loads(after)["cells"]
    assert cells[2]["source"] == [
        "%%time\n", "import copy\n", "best = copy.deepcopy(model.state_dict())\n",
        "with torch.no_grad():\n", "    model.weight.mul_(2)\n", "print(best['weight'])\n",
        "flat = x.t().reshape(-1)"]
    assert cells[3]["source"] == ("g = torch.zeros(3, 4)\r\nsame = g.untyped_storage()"
                                  ".data_ptr() == g[1:].untyped_storage().data_ptr()")
    # Outside the edited sources nothing moved: same layout, keys, outputs, metadata.
    expected = json.loads(text)
    expected["cells"][2]["source"], expected["cells"][3]["source"] = cells[2]["source"], \
        cells[3]["source"]
    assert after == json.dumps(expected, indent=indent, ensure_ascii=ascii_only) + "\n"
    assert run(capsys, "--fix", "--unsafe-fixes", "nb.ipynb")[0] == 0
    assert Path("nb.ipynb").read_text(encoding="utf-8") == after


def test_notebook_fix_leaves_ipython_lines_and_refuses_a_layout_it_cannot_keep(
        tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # The edit would fall on a masked shell line: that fix is not offered.
    cells = [_code(["import torch\n", "x = torch.randn(3, 4)\n",
                    "!echo {x.t().view(-1)}\n", "y = x.t().view(-1)"])]
    found = check_notebook(_notebook(cells), "nb.ipynb", ALL)
    assert [(d.code, d.location.row, d.fix is not None) for d in found] == [
        ("AL202", 4, True)]
    # A hand-written layout would not survive a rewrite: reported, not written.
    odd = _notebook(cells).replace('"nbformat": 4', '"nbformat":    4')
    Path("nb.ipynb").write_text(odd)
    code, _, err = run(capsys, "--fix", "nb.ipynb")
    assert code == 1 and "not fixed: its JSON is not laid out" in err
    assert Path("nb.ipynb").read_text() == odd


# --- Where a rule's rewrite is right, and where it is only shown or not offered.

def _fixes(source: str, code: str) -> list[tuple[int, str, str]]:
    return [(d.location.row, d.fix.applicability, d.fix.edits[0].content)
            for d in check_source(source, "t.py", [code]) if d.fix is not None]


def test_replicated_tensor_fix_rebuilds_only_fresh_tensors():
    source = '''\
import torch
base = torch.ones(8)
sums = [torch.zeros(8, dtype=torch.float32)] * 3
again = 3 * [base]
slots = dict.fromkeys(["a", "key"], torch.zeros(2))
moments = [torch.zeros(len(slots))] * 2
for c in range(3):
    sums[c].add_(1)
    again[c].add_(1)
slots["a"].add_(1)
moments[0].add_(1)
'''
    assert _fixes(source, "AL206") == [
        (8, "unsafe", "[torch.zeros(8, dtype=torch.float32) for _ in range(3)]"),
        (9, "display-only", "[base.clone() for _ in range(3)]"),
        (10, "unsafe", '{key: torch.zeros(2) for key in ["a", "key"]}'),
        # `len(slots)` is a call: evaluated once per element it might differ, so shown only.
        (11, "display-only", "[torch.zeros(len(slots)) for _ in range(2)]"),
    ]


def test_lost_write_fix_indexes_the_source_once():
    source = '''\
import torch
logits = torch.randn(4, 10)
done = torch.tensor([True, False, True, False])
logits[done][:, 1:] = float("-inf")
logits[done].fill_(0)
logits[done].add_(1)
grid = logits > 0
logits[grid][:2] = 0
rows = torch.zeros(5, 3)
rows[[1, 3]][:, 0] = 1
rows[[1, 3]].zero_()
rows.index_select(0, torch.tensor([1])).zero_()
'''
    assert _fixes(source, "AL204") == [
        (4, "unsafe", "logits[done, 1:]"),
        (5, "unsafe", "logits[done] = 0"),
        (6, "unsafe", "logits[done] += 1"),
        # `grid` has two dims: `logits[grid, :2]` would index other elements; no fix.
        (10, "unsafe", "rows[[1, 3], 0]"),
        (11, "unsafe", "rows[[1, 3]] = 0"),
    ]


def test_data_write_fix_only_for_a_computed_tensor():
    source = '''\
import torch
from torch import nn
w = nn.Parameter(torch.randn(3, 3))
y = torch.sin(w)
w.data.mul_(2)
y.sum().backward()
a = torch.randn(3, requires_grad=True)
b = a.exp()
b.data.clamp_(max=1)
b.sum().backward()
'''
    assert _fixes(source, "AL103") == [(9, "unsafe", "b = b.clamp(max=1)")]


def test_a_parameter_update_is_not_rewritten_out_of_place():
    source = '''\
import torch
from torch import nn
p = nn.Parameter(torch.randn(3))
z = torch.sin(p)
with torch.no_grad():
    p.add_(1)
z.sum().backward()
'''
    assert _fixes(source, "AL101") == [(6, "display-only", "p = p.add(1)")]


def test_numpy_sharing_fix_copies_the_side_the_call_makes():
    source = '''\
import numpy as np
import torch
frame = np.zeros((4, 4), dtype=np.float32)
pixels = torch.from_numpy(frame)
pixels.mul_(2)
print(frame.sum())
t = torch.ones(3)
view = t.numpy()
view[0] = 5
print(t)
'''
    assert _fixes(source, "AL301") == [(5, "unsafe", "torch.from_numpy(frame).clone()"),
                                       (9, "unsafe", "t.numpy().copy()")]


def test_fix_settings_add_up_through_extend(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("base.toml").write_text('extend-safe-fixes = ["AL104"]\nunfixable = ["AL404"]\n')
    Path("project").mkdir()
    Path("project/aliaslint.toml").write_text(
        'extend = "../base.toml"\nextend-safe-fixes = ["AL207"]\n')
    Path("project/m.py").write_text(TRAIN)
    main(["check", "--no-cache", "--output-format", "json", "project/m.py"])
    findings = {d["code"]: d["fix"]["applicability"] for d in json.loads(capsys.readouterr().out)}
    assert findings == {"AL104": "safe", "AL202": "safe", "AL207": "safe",
                        "AL404": "display-only"}


# --- Every fix is verified: it compiles, is not reported again, and its names mean what it means.

def _run_python(torch_python, tmp_path: Path, name: str, source: str
                ) -> subprocess.CompletedProcess:
    (tmp_path / name).write_text(source)
    return torch_python.run(tmp_path, name)


def _unsafe(d: Diagnostic) -> bool:
    return d.fix is not None and d.fix.applicability in ("safe", "unsafe")


def _fix_file_text(source: str, tmp_path: Path):
    from aliaslint.fixes import fix_bytes

    return fix_bytes(source.encode(), ".py", "t.py",
                     lambda text: check_source(text, "t.py", ALL), _unsafe)


TRACKER = '''\
import torch
import torch.nn as nn


class Tracker:
    def __init__(self):
        self.model = nn.Linear(4, 4)

    def snapshot(self, copy=False):
        best = self.model.state_dict()
        with torch.no_grad():
            self.model.weight.add_(1.0)
        return torch.equal(best["weight"], self.model.weight)


print(Tracker().snapshot())
'''


def test_deepcopy_fix_reads_the_copy_module_under_an_alias_where_copy_is_a_parameter(tmp_path,
                                                                                    torch_python):
    found = check_source(TRACKER, "t.py", ALL)
    assert [(d.code, d.location.row, d.location.column) for d in found] == [("AL207", 10, 16)]
    after = fixed(TRACKER, unsafe=True)
    assert after.startswith("import copy as _copy\nimport torch\n")
    assert "        best = _copy.deepcopy(self.model.state_dict())\n" in after
    assert check_source(after, "t.py", ALL) == [] and fixed(after, unsafe=True) == after
    # The snapshot is now a copy: it no longer equals the updated weight, and nothing raises.
    assert _run_python(torch_python, tmp_path, "before.py", TRACKER).stdout == "True\n"
    ran = _run_python(torch_python, tmp_path, "after.py", after)
    assert ran.returncode == 0 and ran.stdout == "False\n", ran.stderr


def test_deepcopy_fix_uses_copy_itself_where_the_scope_does_not_rebind_it():
    source = TRACKER.replace("import torch\n", "import copy\nimport torch\n", 1).replace(
        "copy=False", "keep=False")
    after = fixed(source, unsafe=True)
    assert after.count("import copy") == 1 and "best = copy.deepcopy(self.model" in after


def test_a_fix_reading_a_shadowed_name_is_refused_and_stays_not_fixable(tmp_path):
    # What the AL207 fix wrote before it asked the scope: `copy` is the parameter there.
    plain = Diagnostic(
        "AL207", "snapshot", "t.py", Position(10, 16), Position(10, 39),
        fix=Fix("take a copy with `copy.deepcopy(...)`", "unsafe", (
            Edit("import copy\n", Position(1, 1), Position(1, 1)),
            Edit("copy.deepcopy(self.model.state_dict())", Position(10, 16),
                 Position(10, 39)))))
    outcome = fix_text(TRACKER, "t.py", lambda t: [plain] if t == TRACKER else [],
                       lambda d: True)
    assert outcome.text == TRACKER and not outcome.fixed
    assert outcome.dropped == [
        "AL207 at 10:16: take a copy with `copy.deepcopy(...)` (`copy` where the fix reads "
        "it would not be the module `copy`: the name is bound to something else in that "
        "scope)"]
    left = outcome.unfixable([plain])
    assert left[0].fix is not None and left[0].fix.applicability == "display-only"
    assert "not applied" in left[0].fix.message


def test_a_fix_reading_a_name_nothing_binds_is_refused():
    text = "import torch\nfrom torch.nn.functional import relu_\nx = torch.ones(2)\nrelu_(x)\n"
    twin = Diagnostic("AL105", "m", "t.py", Position(4, 1), Position(4, 9),
                      fix=Fix("use `relu`", "unsafe", (Edit("relu", Position(4, 1),
                                                            Position(4, 6)),)))
    outcome = fix_text(text, "t.py", lambda t: [twin] if t == text else [], lambda d: True)
    assert outcome.text == text
    assert "`relu` would not be bound where the fix reads it" in outcome.dropped[0]
    imported = text.replace("import relu_", "import relu, relu_")
    twin = Diagnostic("AL105", "m", "t.py", Position(4, 1), Position(4, 9),
                      fix=twin.fix)
    ok = fix_text(imported, "t.py", lambda t: [twin] if t == imported else [], lambda d: True)
    assert ok.text.endswith("\nrelu(x)\n") and not ok.dropped


def test_a_fix_that_the_target_python_cannot_compile_is_refused():
    text = "import torch\nx = torch.ones(2)\ny = x\n"
    walrus = Diagnostic("AL404", "m", "t.py", Position(3, 5), Position(3, 6),
                        fix=Fix("f", "safe", (Edit("(z := x)", Position(3, 5),
                                                   Position(3, 6)),)))

    def check(t):
        found = check_source(t, "t.py", ALL, target_version=(3, 7))
        return found + [walrus] if t == text else found

    outcome = fix_text(text, "t.py", check, lambda d: True)
    assert outcome.text == text
    assert "the result would not be checked" in outcome.dropped[0]


CHAIN = '''\
import torch

x = torch.randn(3, requires_grad=True)
y = x.sigmoid()
z = y.mul_(2).add_(1)
z.sum().backward()
print("ok", x.grad.shape)
'''


def test_a_chain_of_in_place_methods_is_one_finding_at_its_first_link(tmp_path, torch_python):
    found = check_source(CHAIN, "t.py", ALL)
    assert [(d.code, d.location.row, d.location.column, d.end_location.column) for d in found] \
        == [("AL101", 5, 5, 14)]
    assert found[0].message == (
        "`y.mul_(2)` overwrites `y`, saved for backward by `x.sigmoid()`; `z.sum().backward()` "
        "at line 6 will raise · saved: `x.sigmoid()` (its result, line 4) · use the "
        "out-of-place op, or `.clone()` before writing")
    before = _run_python(torch_python, tmp_path, "b.py", CHAIN)
    assert "modified by an inplace operation" in before.stderr
    after = fixed(CHAIN, unsafe=True)
    assert after.splitlines()[4] == "z = y.mul(2).add_(1)"
    assert check_source(after, "t.py", ALL) == [] and fixed(after, unsafe=True) == after
    ran = _run_python(torch_python, tmp_path, "a.py", after)
    assert ran.returncode == 0 and ran.stdout == "ok torch.Size([3])\n", ran.stderr


def test_a_chain_as_a_statement_keeps_its_result_under_the_written_name(tmp_path, torch_python):
    source = CHAIN.replace("z = y.mul_(2).add_(1)\nz.sum()", "y.mul_(2).add_(1)\ny.sum()")
    found = check_source(source, "t.py", ALL)
    assert [(d.code, d.location.row, d.location.column) for d in found] == [("AL101", 5, 1)]
    after = fixed(source, unsafe=True)
    assert after.splitlines()[4] == "y = y.mul(2).add_(1)"
    ran = _run_python(torch_python, tmp_path, "a.py", after)
    assert ran.returncode == 0 and ran.stdout == "ok torch.Size([3])\n", ran.stderr


def test_a_chain_whose_fix_would_write_a_new_saved_tensor_is_not_fixed(tmp_path, torch_python):
    # `b.sigmoid()` saves its result, which the next link would write: the re-check sees
    # that at the edited line, so the fix is refused and the finding stays, not fixable.
    source = '''\
import torch

a = torch.randn(3, requires_grad=True)
b = a.exp()
c = b.sigmoid_().mul_(2)
c.sum().backward()
'''
    found = check_source(source, "t.py", ALL)
    assert [(d.code, d.location.row, d.location.column) for d in found] == [("AL101", 5, 5)]
    done = _fix_file_text(source, tmp_path)
    assert done.data is None and not done.outcome.fixed
    assert done.outcome.dropped[0] == (
        "AL101 at 5:5: use the out-of-place `sigmoid` (the fixed code would be reported as "
        "AL101 at line 5: `b.sigmoid().mul_(2)` overwrites what `b.sigmoid()` saved for "
        "backward; `c.sum().backward()` at line 6 will raise)")
    [left] = done.remaining
    assert left.fix is not None and left.fix.applicability == "display-only"
    # And the refused rewrite would indeed still raise.
    ran = _run_python(torch_python, tmp_path, "a.py", source.replace("sigmoid_()", "sigmoid()"))
    assert "modified by an inplace operation" in ran.stderr


VIEW_WRITTEN = '''\
import torch

x = torch.arange(12.0).reshape(3, 4).t()
y = x.view(12)
y.add_(1)
print(x.sum().item())
'''


def test_a_view_written_in_place_on_a_non_contiguous_base_is_not_fixed(tmp_path, torch_python):
    found = check_source(VIEW_WRITTEN, "t.py", ALL)
    # One finding: the `add_` after the view that raises never runs, so no AL201 there.
    assert [(d.code, d.location.row, d.location.column, d.fix) for d in found] == [
        ("AL202", 4, 5, None)]
    assert "no automatic fix: `y` is written in place, and on this layout `.reshape(...)` " \
        "and `.contiguous().view(...)` both copy" in found[0].message
    assert fixed(VIEW_WRITTEN, unsafe=True) == VIEW_WRITTEN
    raised = _run_python(torch_python, tmp_path, "v.py", VIEW_WRITTEN)
    assert "view size is not compatible" in raised.stderr
    # What the refused rewrite does: no crash, and the write silently misses `x`.
    ran = _run_python(torch_python, tmp_path, "r.py", VIEW_WRITTEN.replace(".view(", ".reshape("))
    assert ran.returncode == 0 and ran.stdout == "66.0\n"


def test_a_view_kept_while_its_base_is_written_is_not_fixed():
    source = VIEW_WRITTEN.replace("y.add_(1)\nprint(x.sum().item())",
                                  "x.add_(1)\nprint(y.sum().item())")
    [finding] = check_source(source, "t.py", ALL)
    assert finding.code == "AL202" and finding.fix is None
    assert "`x` is written in place while the view is kept" in finding.message
    # A view nothing writes is still fixed: `.view` raised for certain, `.reshape` copies.
    plain = VIEW_WRITTEN.replace("y.add_(1)\n", "")
    assert "y = x.reshape(12)\n" in fixed(plain, unsafe=False)


def test_code_after_a_call_that_raises_for_certain_is_not_reported_on_that_path_only():
    source = '''\
import torch

x = torch.arange(12.0).reshape(3, 4).t()
try:
    y = x.view(12)
    y.add_(1)
except RuntimeError:
    y = x.reshape(12)
flag = torch.rand(()) > 0.5
u = x.view(12) if flag else x.t().view(12)
q = x.t().view(12)
q.add_(1)
print(x.sum())
x.view(12).add_(1)
print(x.sum())
'''
    found = check_source(source, "t.py", ALL)
    # The handler resumes the path, and a raise in one arm of a conditional does not end
    # it: the view `q` written at line 12 is reported.  The `add_` at line 6 is not, nor
    # the one chained on the view that raises at line 14.
    assert [(d.code, d.location.row) for d in found] == [
        ("AL202", 5), ("AL202", 10), ("AL201", 12), ("AL202", 14)]


def test_a_refused_fix_is_counted_as_remaining_and_shown_as_not_applied(tmp_path, capsys,
                                                                         monkeypatch):
    monkeypatch.chdir(tmp_path)
    source = CHAIN.replace("y = x.sigmoid()\nz = y.mul_(2).add_(1)",
                           "y = x.exp()\nz = y.sigmoid_().mul_(2)")
    Path("m.py").write_text(source)
    code, out, err = run(capsys, "--fix", "--unsafe-fixes", "m.py")
    assert code == 1 and Path("m.py").read_text() == source
    assert "Found 1 finding (0 fixed, 1 remaining)." in out
    reason = ("the fixed code would be reported as AL101 at line 5: `y.sigmoid().mul_(2)` "
              "overwrites what `y.sigmoid()` saved for backward; `z.sum().backward()` at line "
              "6 will raise")
    assert f"= help: use the out-of-place `sigmoid` (not applied: {reason}) (display-only fix" \
        in out
    assert err == f"aliaslint: warning: m.py: fix not applied: AL101 at 5:5: use the " \
        f"out-of-place `sigmoid` ({reason})\n"
