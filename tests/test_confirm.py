"""Confirmation of static findings: run the program, give each finding a status."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch  # noqa: F401  (confirmation needs it)

from aliaslint.catalog import load_rules
from aliaslint.cli import main
from aliaslint.confirm import confirm
from aliaslint.diagnostics import Diagnostic, Position

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = sorted((ROOT / "fixtures").rglob("*.py"))
STATIC = ("confirmed", "refuted", "not-reached")


def statuses(outcome, codes=None):
    return [(d.code, d.location.row, d.status) for d in outcome.diagnostics
            if d.status in STATIC and (codes is None or d.code.startswith(codes))]


def run_here(tmp_path: Path, monkeypatch, source: str, name: str = "prog.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    monkeypatch.chdir(tmp_path)
    return confirm(script=str(path), cwd=str(tmp_path))


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_fixture_finding_is_confirmed(fixture, monkeypatch, capsys):
    monkeypatch.chdir(fixture.parent)
    outcome = confirm(script=str(fixture), cwd=str(fixture.parent))
    assert outcome.exit_status == 0
    # Implemented rules with a predicate of their own must all be seen at run time.  The
    # generic write predicate of AL206-AL208 does not fit their hazards yet (see
    # docs/trace.md), so their statuses are not asserted here.
    rules = load_rules()
    implemented = [(code, row, status) for code, row, status in statuses(outcome)
                   if rules[code].implemented and code not in ("AL206", "AL207", "AL208")]
    assert all(status == "confirmed" for *_, status in implemented), implemented
    assert str(fixture) in outcome.files


def _examples(kind: str):
    for code, rule in load_rules().items():
        if not rule.implemented or not code.startswith(("AL1", "AL4")):
            continue
        blocks = re.findall(rf"```python {kind}\n(.*?)```", rule.text, re.DOTALL)
        for index, block in enumerate(blocks):
            yield pytest.param(code, block, id=f"{code}-{kind}-{index}")


@pytest.mark.parametrize(("code", "source"), list(_examples("bad")))
def test_rule_bad_examples_are_confirmed(code, source, tmp_path, monkeypatch, capsys):
    outcome = run_here(tmp_path, monkeypatch, source, "example.py")
    found = statuses(outcome)
    assert found, "the bad example has no finding"
    # Functions an example defines but never calls are not reached; nothing is refuted.
    assert all(status in ("confirmed", "not-reached") for *_, status in found), found
    assert any(c == code and status == "confirmed" for c, _, status in found), found


@pytest.mark.parametrize(("code", "source"), list(_examples("good")))
def test_rule_good_examples_have_nothing_refuted(code, source, tmp_path, monkeypatch, capsys):
    outcome = run_here(tmp_path, monkeypatch, source, "example.py")
    assert not [d for d in outcome.diagnostics if d.status in ("refuted", "confirmed")]


def test_unreachable_finding_is_not_reached(tmp_path, monkeypatch, capsys):
    outcome = run_here(tmp_path, monkeypatch, """\
        import torch


        def same(a: torch.Tensor, b: torch.Tensor) -> bool:
            return id(a) == id(b)


        def never_called(x: torch.Tensor) -> bool:
            return x.data_ptr() == x[1:].data_ptr()


        t = torch.zeros(4)
        print(same(t, t[1:]))
    """)
    assert statuses(outcome) == [("AL401", 5, "confirmed"), ("AL403", 9, "not-reached")]


def test_hand_made_false_positive_is_refuted(tmp_path, monkeypatch, capsys):
    """Findings placed by hand where nothing aliases: the run refutes them."""
    import aliaslint.confirm as module

    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent("""\
        import torch

        x = torch.ones(3, requires_grad=True)
        y = (x * 2).sum()
        z = y.detach().clone()
        z.add_(1)
        n, m = 3, 4
        print(n is m, z)
        y.backward()
    """))
    made = [
        Diagnostic("AL101", "hand-made", str(path), Position(6, 1), Position(6, 10)),
        Diagnostic("AL402", "hand-made", str(path), Position(8, 7), Position(8, 13)),
        Diagnostic("AL201", "hand-made", str(path), Position(6, 1), Position(6, 10)),
    ]
    original = module.make_witnesses
    monkeypatch.setattr(module, "make_witnesses",
                        lambda diagnostics, p, source: original([*diagnostics, *made], p, source))
    monkeypatch.chdir(tmp_path)
    outcome = confirm(script=str(path), cwd=str(tmp_path))
    assert statuses(outcome) == [("AL101", 6, "refuted"), ("AL201", 6, "refuted"),
                                 ("AL402", 8, "refuted")]
    assert "`n` is a int" in outcome.note(outcome.diagnostics[-1])


def test_runtime_only_findings_are_kept(tmp_path, monkeypatch, capsys):
    outcome = run_here(tmp_path, monkeypatch, """\
        import torch

        def scale(t):
            t.mul_(2)

        w = torch.ones(3, requires_grad=True)
        h = torch.sigmoid(w)
        scale(h)
    """)
    assert [(d.code, d.status) for d in outcome.diagnostics] == [("AL101", "runtime")]


def test_check_trace_cli_json_and_exit_codes(tmp_path):
    fixture = ROOT / "fixtures" / "autograd" / "weight_clipping.py"
    out = tmp_path / "report.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-W", "ignore", "-m", "aliaslint", "check", "--trace",
         "--output-format", "json", "-o", str(out), fixture.name, "ignored-arg"],
        cwd=fixture.parent, capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 1, result.stderr
    assert "gradient of the penalty is 2w: False" in result.stdout  # the program's output
    report = json.loads(out.read_text())
    assert [(d["code"], d["location"]["row"], d["status"]) for d in report] == [
        ("AL103", 36, "confirmed"), ("AL102", 42, "confirmed")]
    assert all(not d["message"].startswith("[") for d in report)


def test_trace_confirm_text_output_and_fail_on(tmp_path, monkeypatch, capsys):
    (tmp_path / "prog.py").write_text(textwrap.dedent("""\
        import torch


        def same(a: torch.Tensor, b: torch.Tensor) -> bool:
            return a is b


        print(same(torch.zeros(2), torch.zeros(2)))
    """))
    (tmp_path / "unreached.py").write_text(textwrap.dedent("""\
        import torch


        def same(a: torch.Tensor, b: torch.Tensor) -> bool:
            return a is b
    """))
    monkeypatch.chdir(tmp_path)
    assert main(["trace", "--confirm", "--output-format", "concise", "prog.py"]) == 1
    err = capsys.readouterr().err
    assert "prog.py:5:12: AL402 [confirmed]" in err
    assert "1 confirmed, 0 refuted, 0 not reached" in err
    assert main(["check", "--trace", "--fail-on", "never", "prog.py"]) == 0
    capsys.readouterr()
    # A module that is imported but whose finding never runs: not reached, still failing.
    (tmp_path / "main.py").write_text("import unreached\n")
    assert main(["check", "--trace", "--output-format", "concise", "main.py"]) == 1
    assert "unreached.py:5:12: AL402 [not-reached]" in capsys.readouterr().err
    assert main(["check", "--trace", "--fail-on", "confirmed", "main.py"]) == 0
