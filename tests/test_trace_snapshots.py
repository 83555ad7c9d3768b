"""Snapshots taken by reference at run time (AL207): a tensor kept from `state_dict()` or
`.grad`, written in place by its owner, then read through the kept reference.  Each case is a
training-loop shape run untraced, traced and traced deep: the program asserts what the hazard
does to its data, and the findings are compared exactly."""

from __future__ import annotations

import contextlib
import io
import runpy
import textwrap
from pathlib import Path

import pytest

import aliaslint

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _in_tmp_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def run(path: Path, deep: bool | None):
    out = io.StringIO()
    tracer = aliaslint.trace(deep=deep) if deep is not None else None
    torch.manual_seed(0)
    with contextlib.redirect_stdout(out):
        with tracer if tracer is not None else contextlib.nullcontext():
            runpy.run_path(str(path), run_name="__main__")
    return out.getvalue(), (tracer.findings if tracer is not None else [])


def traced(tmp_path: Path, source: str) -> list[tuple]:
    """The findings as (code, row, ((related message, row), ...)); the program's own
    assertions hold untraced and traced, it prints the same, and both tracers agree."""
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent(source))
    plain, _ = run(path, None)
    found = {}
    for deep in (False, True):
        out, findings = run(path, deep)
        assert out == plain
        found[deep] = [(d.code, d.location.row,
                        tuple((r.message, r.location.row) for r in d.related))
                       for d in findings]
    assert found[True] == found[False]
    return found[False]


def test_early_stopping_restores_the_last_weights_not_the_best(tmp_path):
    source = """\
        import torch
        import torch.nn as nn

        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        opt = torch.optim.Adam(model.parameters(), lr=0.05)
        x, y = torch.randn(64, 4), torch.randn(64, 1)
        xv, yv = torch.randn(32, 4), torch.randn(32, 1)
        best_val, best, bad_epochs = float("inf"), None, 0
        for epoch in range(200):
            opt.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            opt.step()
            with torch.no_grad():
                val = nn.functional.mse_loss(model(xv), yv).item()
            if val < best_val:
                best_val, bad_epochs = val, 0
                best = model.state_dict()
            else:
                bad_epochs += 1
                if bad_epochs == 5:
                    break
        final = {k: v.clone() for k, v in model.state_dict().items()}
        model.load_state_dict(best)
        with torch.no_grad():
            restored = nn.functional.mse_loss(model(xv), yv).item()
        # The "best" weights are the final ones: the restore did nothing.
        assert all(torch.equal(final[k], v) for k, v in model.state_dict().items())
        assert restored > best_val
        print("stopped at", epoch)
    """
    assert traced(tmp_path, source) == [
        ("AL207", 17, (("overwritten here", 12), ("read here", 23)))]


def test_early_stopping_with_a_real_copy_is_clean(tmp_path):
    source = """\
        import copy

        import torch
        import torch.nn as nn

        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        x, y = torch.randn(64, 4), torch.randn(64, 1)
        best_loss = float("inf")
        for epoch in range(20):
            loss = nn.functional.mse_loss(model(x), y)
            if loss.item() < best_loss:
                best_loss = loss.item()
                best_deep = copy.deepcopy(model.state_dict())
                best_clone = {k: v.clone() for k, v in model.state_dict().items()}
                best_params = [p.detach().clone() for p in model.parameters()]
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.load_state_dict(best_deep)
        assert all(torch.equal(best_clone[k], v) for k, v in model.state_dict().items())
        assert all(torch.equal(a, b) for a, b in zip(best_params, model.parameters()))
        with torch.no_grad():
            assert abs(nn.functional.mse_loss(model(x), y).item() - best_loss) < 1e-6
    """
    assert traced(tmp_path, source) == []


def test_snapshot_overwritten_but_never_read_again_is_clean(tmp_path):
    source = """\
        import torch
        import torch.nn as nn

        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        start = model.state_dict()
        print(sorted(start))
        for step in range(3):
            opt.zero_grad()
            model(torch.randn(8, 4)).sum().backward()
            opt.step()
        # `start` is still alive, but nothing reads it after the steps.
        print(model.weight.shape)
    """
    assert traced(tmp_path, source) == []


def test_restore_through_load_state_dict_of_other_values(tmp_path):
    """`load_state_dict` is the owner's write too: a snapshot taken before loading a
    checkpoint and compared afterwards compares the checkpoint with itself."""
    source = """\
        import torch
        import torch.nn as nn

        model = nn.Linear(3, 2)
        checkpoint = {k: torch.zeros_like(v) for k, v in model.state_dict().items()}
        before = model.state_dict()
        model.load_state_dict(checkpoint)
        unchanged = torch.equal(before["weight"], model.weight)
        assert unchanged  # the comparison cannot see the load
        print(unchanged)
    """
    assert traced(tmp_path, source) == [
        ("AL207", 6, (("overwritten here", 7), ("read here", 8)))]


def test_user_copy_into_a_parameter_overwrites_the_snapshot(tmp_path):
    source = """\
        import torch
        import torch.nn as nn

        model = nn.Linear(3, 1)
        saved = model.state_dict()
        with torch.no_grad():
            model.weight.copy_(torch.ones(1, 3))
        torch.save(saved, "saved.pt")
        assert torch.equal(torch.load("saved.pt")["weight"], torch.ones(1, 3))
    """
    assert traced(tmp_path, source) == [
        ("AL207", 5, (("overwritten here", 7), ("read here", 8)))]


def test_teacher_loaded_from_the_student_state_dict_is_clean(tmp_path):
    """An EMA / teacher copy: `load_state_dict` copies the values into the teacher's own
    tensors, so the teacher does not follow the student's later steps."""
    source = """\
        import torch
        import torch.nn as nn

        student, teacher = nn.Linear(4, 2), nn.Linear(4, 2)
        teacher.load_state_dict(student.state_dict())
        opt = torch.optim.SGD(student.parameters(), lr=0.5)
        for step in range(5):
            opt.zero_grad()
            student(torch.randn(8, 4)).pow(2).sum().backward()
            opt.step()
            with torch.no_grad():
                for t, s in zip(teacher.state_dict().values(), student.state_dict().values()):
                    t.mul_(0.9).add_(s, alpha=0.1)
        assert not torch.equal(teacher.weight, student.weight)
        teacher.load_state_dict(teacher.state_dict())
    """
    assert traced(tmp_path, source) == []


def test_optimizer_state_kept_for_a_rollback_follows_every_step(tmp_path):
    """`optimizer.state_dict()` hands out the live momentum buffers (and Adam's moments and
    step counts), and `load_state_dict` keeps them: a rollback to the kept state restores the
    current buffers. Reported where the state was kept, the step that wrote it and the load
    that read it related."""
    source = """\
        import copy

        import torch
        import torch.nn as nn

        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        x, y = torch.randn(32, 4), torch.randn(32, 1)
        for step in range(4):
            opt.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            opt.step()
            if step == 1:
                good_model = copy.deepcopy(model.state_dict())
                good_opt = opt.state_dict()
                momentum = opt.state[model.weight]["momentum_buffer"].clone()
        model.load_state_dict(good_model)
        opt.load_state_dict(good_opt)
        restored = opt.state[model.weight]["momentum_buffer"]
        assert not torch.equal(restored, momentum)  # the rollback kept the current buffer
        print(restored.shape)
    """
    assert traced(tmp_path, source) == [
        ("AL207", 15, (("overwritten here", 12), ("read here", 18)))]


def test_optimizer_state_copied_or_saved_at_once_is_clean(tmp_path):
    """A deep copy of the optimizer's state, and the state saved as soon as it is taken,
    hold the values of that moment; Adam's later steps change neither. Comparing the live
    state (reached through `optimizer.state`) is no read of the state taken earlier."""
    source = """\
        import copy
        import io

        import torch
        import torch.nn as nn

        model = nn.Linear(4, 1)
        opt = torch.optim.Adam(model.parameters(), lr=0.05)
        x, y = torch.randn(32, 4), torch.randn(32, 1)
        buffer = io.BytesIO()
        for step in range(4):
            opt.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            opt.step()
            if step == 1:
                kept = copy.deepcopy(opt.state_dict())
                torch.save(opt.state_dict(), buffer)
        moment = kept["state"][0]["exp_avg"]
        assert not torch.equal(moment, opt.state[model.weight]["exp_avg"])
        opt.load_state_dict(kept)
        assert torch.equal(opt.state[model.weight]["exp_avg"], moment)
        print(len(buffer.getvalue()) > 0)
    """
    assert traced(tmp_path, source) == []


def test_gradient_agreement_kept_across_two_backward_passes(tmp_path):
    """`zero_grad(set_to_none=False)` zeroes the gradient in place and the second backward
    accumulates into it: the "first" gradient is the second one."""
    source = """\
        import torch
        import torch.nn as nn

        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        a, b = torch.randn(16, 4), torch.randn(16, 4)
        opt.zero_grad(set_to_none=False)
        model(a).pow(2).mean().backward()
        g_a = model.weight.grad
        opt.zero_grad(set_to_none=False)
        model(b).pow(2).mean().backward()
        agree = torch.allclose(g_a, model.weight.grad)
        assert agree  # always: both names are one tensor
        print(agree)
    """
    assert traced(tmp_path, source) == [
        ("AL207", 9, (("overwritten here", 10), ("read here", 12)))]


def test_gradient_kept_and_read_alone_after_accumulation(tmp_path):
    source = """\
        import torch
        import torch.nn as nn

        model = nn.Linear(4, 1)
        x = torch.randn(16, 4)
        model(x).sum().backward()
        first = model.weight.grad
        expected = first.clone()
        model(x).sum().backward()
        assert not torch.equal(first, expected)  # accumulated: twice the first gradient
    """
    assert traced(tmp_path, source) == [
        ("AL207", 7, (("overwritten here", 9), ("read here", 10)))]


def test_gradient_after_default_zero_grad_is_a_new_tensor(tmp_path):
    source = """\
        import torch
        import torch.nn as nn

        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        a, b = torch.randn(16, 4), torch.randn(16, 4)
        model(a).pow(2).mean().backward()
        g_a = model.weight.grad
        opt.zero_grad()
        model(b).pow(2).mean().backward()
        assert not torch.allclose(g_a, model.weight.grad)
        cloned = model.weight.grad.clone()
        opt.zero_grad(set_to_none=False)
        model(a).pow(2).mean().backward()
        assert not torch.equal(cloned, model.weight.grad)
    """
    assert traced(tmp_path, source) == []


def test_gradients_read_fresh_each_step_are_clean(tmp_path):
    """A loop that reads `.grad` at several lines each step, zeroing in place: every read
    follows a fresh `.grad`, so nothing is stale."""
    source = """\
        import torch
        import torch.nn as nn

        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        reference = torch.zeros(1, 4)
        for step in range(4):
            opt.zero_grad(set_to_none=False)
            model(torch.randn(8, 4)).sum().backward()
            g = model.weight.grad
            same = torch.equal(g, model.weight.grad)
            close = torch.allclose(model.weight.grad, reference)
            model.weight.grad.mul_(0.5)
            opt.step()
        assert same and not close
    """
    assert traced(tmp_path, source) == []
