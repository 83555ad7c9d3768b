"""Confirmation of static findings: run the program, give each finding a status."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from aliaslint import registry
from aliaslint.catalog import load_docs
from aliaslint.cli import main
from aliaslint.runtime.confirm import confirm
from aliaslint.diagnostics import META_CODES, Diagnostic, Operand, Position, Related, Witness
from aliaslint.runtime.predicates import named

pytest.importorskip("torch")  # confirmation runs programs under the tracer

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = sorted((ROOT / "fixtures").rglob("*.py"))
STATIC = ("confirmed", "refuted", "not-reached")


def statuses(outcome, codes=None):
    return [(d.code, d.location.row, d.status) for d in outcome.diagnostics
            if d.status in STATIC and (codes is None or d.code.startswith(codes))]


def test_user_code_is_neither_library_nor_installed_nor_aliaslint(tmp_path):
    """The one classifier the tracer (no root) and confirmation (the project root) share."""
    import aliaslint.runtime.confirm
    from aliaslint.runtime.usercode import is_user_file

    def made(relative: str) -> str:
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("import torch\n")
        return str(path)

    user = made("project/train.py")
    root = str(tmp_path / "project")
    assert is_user_file(user) and is_user_file(user, root)
    assert not is_user_file(user, str(tmp_path / "elsewhere"))
    # A virtual environment inside the project: its packages are not the project's code.
    in_venv = made("project/.venv/lib/python3.11/site-packages/helper/ops.py")
    assert not is_user_file(in_venv) and not is_user_file(in_venv, root)
    assert not is_user_file(made("usr/lib/python3/dist-packages/helper.py"))
    assert not is_user_file(os.__file__)  # the standard library
    assert not is_user_file("<frozen importlib._bootstrap>")
    assert not is_user_file(aliaslint.runtime.confirm.__file__, str(ROOT))
    import torch

    assert not is_user_file(torch.__file__)
    # Code without a file: the user's when it runs, never a file of the project.
    assert is_user_file("<string>") and not is_user_file("<string>", root)


def run_here(tmp_path: Path, monkeypatch, source: str, name: str = "prog.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    monkeypatch.chdir(tmp_path)
    return confirm(script=str(path), cwd=str(tmp_path))


@pytest.mark.slow
@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_fixture_finding_is_confirmed(fixture, monkeypatch, capsys):
    monkeypatch.chdir(fixture.parent)
    outcome = confirm(script=str(fixture), cwd=str(fixture.parent))
    assert outcome.exit_status == 0
    # Every finding is seen at run time.
    found = statuses(outcome)
    assert all(status == "confirmed" for *_, status in found), found
    assert str(fixture) in outcome.files


# A rule whose spec carries this sentence is not held to run-time confirmation; the sentence
# goes on to say why.
NOT_CONFIRMED = "Not confirmed at run time:"


def _exempt(code: str, text: str) -> bool:
    return code in META_CODES or NOT_CONFIRMED in text


def _examples(kind: str):
    for code, doc in load_docs().items():
        if _exempt(code, doc.text):
            continue
        for index, example in enumerate(e for e in doc.examples if e.kind == kind):
            yield pytest.param(code, example.source, id=f"{code}-{kind}-{index}")


def test_every_hazard_rule_is_confirmed_at_run_time_or_says_why(capsys):
    """Every rule but the linter's own codes has its bad and good examples run below; the
    exemptions are printed, each with the spec's reason."""
    exempt = {code: doc.text.split(NOT_CONFIRMED, 1)[1].strip().split("\n\n")[0]
              for code, doc in load_docs().items()
              if code not in META_CODES and NOT_CONFIRMED in doc.text}
    with capsys.disabled():
        print("\nrules not confirmed at run time:",
              ", ".join(f"{code} ({why})" for code, why in exempt.items()) or "none")
    ran = {param.values[0] for param in _examples("bad")}
    assert ran == set(load_docs()) - META_CODES - set(exempt)
    assert {param.values[0] for param in _examples("good")} == ran
    for code in ran:  # each has its runtime half
        assert registry.get(code).confirm is not None, code


def assert_confirmed(code: str, source: str, tmp_path: Path, monkeypatch) -> None:
    """The bad example's finding of ``code`` is confirmed by running it; nothing is refuted
    (functions an example defines but never calls are not reached)."""
    outcome = run_here(tmp_path, monkeypatch, source, "example.py")
    found = statuses(outcome)
    assert found, "the bad example has no finding"
    assert all(status in ("confirmed", "not-reached") for *_, status in found), found
    assert any(c == code and status == "confirmed" for c, _, status in found), found


@pytest.mark.parametrize(("code", "source"), list(_examples("bad")))
def test_rule_bad_examples_are_confirmed(code, source, tmp_path, monkeypatch, capsys):
    assert_confirmed(code, source, tmp_path, monkeypatch)


@pytest.mark.parametrize(("code", "source"), list(_examples("good")))
def test_rule_good_examples_are_clean_at_run_time(code, source, tmp_path, monkeypatch, capsys):
    """`trace` finds nothing in a good example, and `check --trace` neither confirms nor
    refutes anything there."""
    from aliaslint.runtime.tracer import run_program, trace

    path = tmp_path / "example.py"
    path.write_text(source)
    monkeypatch.chdir(tmp_path)
    tracer = trace()
    assert run_program(tracer, script=str(path), args=[]) == 0
    assert tracer.findings == []
    outcome = confirm(script=str(path), cwd=str(tmp_path))
    assert not [d for d in outcome.diagnostics if d.status in ("refuted", "confirmed")]


def test_a_rule_wired_to_the_wrong_predicate_fails_the_confirmation_test(
        tmp_path, monkeypatch, capsys):
    """A lost-write rule that reused the leaf predicate: its true finding would be printed as
    refuted, and the test above catches it."""
    import aliaslint.checks.al204_write_to_copy_lost as module

    from aliaslint.runtime.predicates import LEAF

    right = module.RULE
    miswired = replace(right, confirm=LEAF)
    monkeypatch.setattr(module, "RULE", miswired)
    monkeypatch.setitem(registry.rules(), "AL204", miswired)
    (source, *_) = [p.values[1] for p in _examples("bad") if p.values[0] == "AL204"]
    with pytest.raises(AssertionError, match="'AL204', [0-9]+, 'refuted'"):
        assert_confirmed("AL204", source, tmp_path, monkeypatch)
    # Wired right, the same example passes.
    monkeypatch.setattr(module, "RULE", right)
    monkeypatch.setitem(registry.rules(), "AL204", right)
    assert_confirmed("AL204", source, tmp_path, monkeypatch)


def test_a_stored_witness_names_its_predicate_and_maps_back_to_it():
    from aliaslint.runtime.predicates import PREDICATES, Kind, named

    assert set(PREDICATES) == set(Kind)
    for kind, predicate in PREDICATES.items():
        claim = Witness(predicate, rows=(3,))
        stored = claim.to_json()
        assert stored[0] == kind.value
        assert Witness.from_json(json.loads(json.dumps(stored))).predicate is predicate
    with pytest.raises(ValueError):
        named("no-such-predicate")


def test_an_operand_the_run_cannot_read_is_could_not_evaluate():
    """An operand behind a property (reading it would run user code), or a name not bound:
    the predicate cannot test the claim, which is not evidence either way."""
    import torch

    from aliaslint.runtime.predicates import SNAPSHOT, STORAGE, TEMPORARY_DATA, Pending
    from aliaslint.runtime.predicates import capture_snapshot
    from aliaslint.runtime.witness import Witness as Claim

    class Holder:
        def __init__(self) -> None:
            self.t = torch.zeros(3)

        @property
        def inner(self) -> Holder:
            return self

    h = Holder()
    frame = sys._getframe()
    behind = Operand("h.inner.t.storage()", ("h", "inner", "t"), ".storage()")
    place = Diagnostic("AL404", "m", __file__, Position(1, 1), Position(1, 2))

    def claim(predicate, **facts) -> Claim:
        made = Claim(place, __file__, frozenset({1}), predicate, **facts)
        made.ran = True
        return made

    storage = claim(STORAGE, operands=(behind,))
    STORAGE.at_line(storage, frame)
    typed = claim(STORAGE, target=("h", "inner", "Kind"))
    STORAGE.at_line(typed, frame)
    temporary = claim(TEMPORARY_DATA, operands=(behind,))
    TEMPORARY_DATA.at_line(temporary, frame)
    snapshot = claim(SNAPSHOT, target=("unbound_name",))
    capture_snapshot(Pending(snapshot, frame.f_code), frame)
    for witness in (storage, typed, temporary, snapshot):
        assert witness.status == "could-not-evaluate", witness.note
        assert "could not be read without running user code" in witness.note
    # Read plainly, the same claim is tested.
    plain = claim(STORAGE, operands=(Operand("h.t.storage()", ("h", "t"), ".storage()"),))
    STORAGE.at_line(plain, frame)
    assert plain.status == "confirmed"
    assert h.t is not None


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


def test_a_check_that_fails_is_not_a_refutal(tmp_path, monkeypatch, capsys):
    """A predicate that raises leaves the finding `could-not-evaluate`, with the error in its
    note, and the program runs on undisturbed."""
    from aliaslint import registry
    from aliaslint.runtime.predicates import COMPARE

    def broken(witness, frame):
        raise ValueError("operand unreadable")

    monkeypatch.setattr(registry.get("AL401"), "confirm", replace(COMPARE, at_line=broken))
    outcome = run_here(tmp_path, monkeypatch, """\
        import torch

        t = torch.zeros(4)
        print("same:", id(t) == id(t[1:]))
    """)
    (finding,) = [d for d in outcome.diagnostics if d.code == "AL401"]
    assert finding.status == "could-not-evaluate"
    assert "ValueError: operand unreadable" in outcome.note(finding)
    assert "same: False" in capsys.readouterr().out


def test_hand_made_false_positive_is_refuted(tmp_path, monkeypatch, capsys):
    """Findings placed by hand where nothing aliases: the run refutes them."""
    import aliaslint.runtime.confirm as module

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
    names = (Operand("n", ("n",)), Operand("m", ("m",)))
    made = [
        Diagnostic("AL101", "hand-made", str(path), Position(6, 1), Position(6, 10),
                   witness=Witness(named("saved"))),
        Diagnostic("AL402", "hand-made", str(path), Position(8, 7), Position(8, 13),
                   witness=Witness(named("compare"), comparison="is", operands=names)),
        Diagnostic("AL201", "hand-made", str(path), Position(6, 1), Position(6, 10),
                   witness=Witness(named("shared-write"))),
    ]
    original = module.make_witnesses
    monkeypatch.setattr(module, "make_witnesses",
                        lambda diagnostics, p: original([*diagnostics, *made], p))
    monkeypatch.chdir(tmp_path)
    outcome = confirm(script=str(path), cwd=str(tmp_path))
    assert statuses(outcome) == [("AL101", 6, "refuted"), ("AL201", 6, "refuted"),
                                 ("AL402", 8, "refuted")]
    assert "`n` is a int" in outcome.note(outcome.diagnostics[-1])


@pytest.mark.slow
def test_snapshots_and_arguments_fixtures_are_confirmed(monkeypatch, capsys):
    folder = ROOT / "fixtures" / "snapshots_and_args"
    monkeypatch.chdir(folder)
    found = []
    notes = []
    for name in ("class_prototypes.py", "dqn_target.py", "early_stopping.py", "normalize.py"):
        outcome = confirm(script=str(folder / name), cwd=str(folder))
        found += [(name, *finding) for finding in statuses(outcome, ("AL206", "AL207",
                                                                     "AL208"))]
        notes += [outcome.note(d) for d in outcome.diagnostics if d.status == "confirmed"]
    assert found == [
        ("class_prototypes.py", "AL206", 23, "confirmed"),
        ("class_prototypes.py", "AL206", 24, "confirmed"),
        ("dqn_target.py", "AL207", 37, "confirmed"),
        ("early_stopping.py", "AL207", 39, "confirmed"),
        ("early_stopping.py", "AL207", 52, "confirmed"),
        ("normalize.py", "AL208", 20, "confirmed"),
        ("normalize.py", "AL208", 39, "confirmed"),
    ]
    assert "3 entries of `sums` that are one tensor object" in notes[0]
    assert "`best_state['0.weight']` was written in place after the snapshot" in notes[3]
    assert "its argument `batch`" in notes[5]


def test_false_replicas_snapshots_and_argument_writes_are_refuted(tmp_path, monkeypatch,
                                                                  capsys):
    """AL206-AL208 placed by hand on their clean variants: the run refutes them."""
    import aliaslint.runtime.confirm as module

    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent("""\
        import torch

        def scaled(t):
            return t * 2

        sums = [torch.zeros(2) for _ in range(3)]
        for c in range(3):
            sums[c].add_(1)
        w = torch.zeros(2)
        for step in range(3):
            prev = w.detach().clone()
            w.add_(1)
            print((w - prev).sum())
        x = torch.ones(2)
        y = scaled(x)
        halves = list(torch.zeros(4).chunk(2))
        halves[0].add_(1)
        print(x, y, sums, halves)
    """))

    def made(code, row, start, end, related=(), witness=None):
        return Diagnostic(code, "hand-made", str(path), Position(row, start), Position(row, end),
                          related=tuple(Related("", str(path), Position(r, 1), Position(r, 2))
                                        for r in related), witness=witness)

    extra = [made("AL206", 8, 5, 20, [6], Witness(named("replicated"))),
             made("AL207", 11, 12, 30, [12, 13], Witness(named("snapshot"), target=("prev",))),
             made("AL208", 4, 5, 17, [15], Witness(named("argument"), rows=(15,),
                                                   operands=(Operand("x", ("x",)),))),
             made("AL206", 17, 1, 18, [16], Witness(named("replicated")))]
    original = module.make_witnesses
    monkeypatch.setattr(module, "make_witnesses",
                        lambda diagnostics, p: original([*diagnostics, *extra], p))
    monkeypatch.chdir(tmp_path)
    outcome = confirm(script=str(path), cwd=str(tmp_path))
    assert statuses(outcome) == [("AL208", 4, "refuted"), ("AL206", 8, "refuted"),
                                 ("AL207", 11, "refuted"), ("AL206", 17, "refuted")]
    notes = [outcome.note(d) for d in outcome.diagnostics]
    assert "at most one entry" in notes[1]
    assert "no tensor `prev` held was written in place" in notes[2] \
        or "`prev` was rebound" in notes[2]
    assert "version of every tensor argument unchanged" in notes[0]


def test_snapshot_over_data_and_argument_in_a_loop(tmp_path, monkeypatch, capsys):
    """`prev = w.data` has a version counter of its own: the write shows on `w`'s."""
    import aliaslint.runtime.confirm as module

    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent("""\
        import torch

        def bump(t):
            t.add_(1)

        w = torch.zeros(2, requires_grad=True)
        for step in range(2):
            prev = w.data
            with torch.no_grad():
                w.add_(1)
            print((w - prev).sum().item())
        for step in range(2):
            bump(w.data)
    """))
    argument = Witness(named("argument"), rows=(13,), operands=(Operand("w.data", ("w",), ".data"),))
    extra = [
        Diagnostic("AL207", "hand-made", str(path), Position(8, 12), Position(8, 18),
                   related=(Related("", str(path), Position(11, 5), Position(11, 10)),),
                   witness=Witness(named("snapshot"), target=("prev",))),
        # The same call claimed with a write where nothing runs, and at the real write.
        Diagnostic("AL208", "hand-made", str(path), Position(2, 1), Position(2, 1),
                   related=(Related("", str(path), Position(13, 5), Position(13, 17)),),
                   witness=argument),
        Diagnostic("AL208", "hand-made", str(path), Position(4, 5), Position(4, 14),
                   related=(Related("", str(path), Position(13, 5), Position(13, 17)),),
                   witness=argument),
    ]
    original = module.make_witnesses
    monkeypatch.setattr(module, "make_witnesses",
                        lambda diagnostics, p: original([*diagnostics, *extra], p))
    monkeypatch.chdir(tmp_path)
    outcome = confirm(script=str(path), cwd=str(tmp_path))
    found = [(d.code, d.location.row, d.status, outcome.note(d)) for d in outcome.diagnostics
             if d.message == "hand-made"]
    assert [f[:3] for f in found] == [("AL208", 2, "refuted"), ("AL208", 4, "confirmed"),
                                      ("AL207", 8, "confirmed")]
    assert "`w` (over the memory of `prev`)" in found[2][3]
    # `.data` has a version counter of its own: only the write inside the callee (where the
    # finding points) shows it; without one the call looks clean.
    assert "passed as `.data`" in found[0][3]
    assert "at line 4, inside the callee, wrote the memory of its argument `w`" in found[1][3]


def test_runtime_only_findings_are_kept(tmp_path, monkeypatch, capsys):
    outcome = run_here(tmp_path, monkeypatch, """\
        import torch

        def scale(t):
            t.mul_(2)

        w = torch.ones(3, requires_grad=True)
        h = torch.sigmoid(w)
        # looked up by a name computed at run time: the static check cannot follow it
        globals()["".join(["sc", "ale"])](h)
        try:
            h.sum().backward()
        except RuntimeError:
            pass
    """)
    assert [(d.code, d.status) for d in outcome.diagnostics] == [("AL101", "runtime")]


@pytest.mark.slow
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


@pytest.mark.slow
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


SAVED_THEN_MAYBE_BACKWARD = """\
    import sys

    import torch

    x = torch.randn(4, requires_grad=True)
    gate = torch.sigmoid(x)
    gate.mul_(2.0)
    if len(sys.argv) > 1:
        try:
            gate.sum().backward()
        except RuntimeError:
            print("backward refused")
"""


@pytest.mark.parametrize("args, status, note", [
    ((), "not-reached", "the line ran, but no backward pass ran after it"),
    (("train",), "confirmed", "the tracer saw it"),
])
def test_inplace_on_saved_tensor_is_reached_only_by_a_backward_pass(
        tmp_path, monkeypatch, capsys, args, status, note):
    """AL101's hazard is the backward pass reading the changed tensor: the write alone,
    with no backward after it, does not reach it."""
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent(SAVED_THEN_MAYBE_BACKWARD))
    monkeypatch.chdir(tmp_path)
    outcome = confirm(script=str(path), args=args, cwd=str(tmp_path))
    assert statuses(outcome) == [("AL101", 7, status)]
    assert outcome.note(outcome.diagnostics[0]).startswith(note)
