"""The default tracer on the hazards torch raises, the silent writes through views and NumPy
memory, and the cases that must stay quiet: each a small program shaped like model code,
run untraced and traced, with the exact findings and the program's output compared."""

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
    """Run the program as ``__main__``: (printed output, its exception, findings);
    ``deep`` None runs it untraced."""
    out = io.StringIO()
    error = None
    tracer = aliaslint.trace(deep=deep) if deep is not None else None
    torch.manual_seed(0)
    with contextlib.redirect_stdout(out):
        try:
            with tracer if tracer is not None else contextlib.nullcontext():
                runpy.run_path(str(path), run_name="__main__")
        except Exception as caught:  # the program's own error, compared below
            error = caught
    return out.getvalue(), error, (tracer.findings if tracer is not None else [])


def traced(tmp_path: Path, source: str, deep: bool | None = None) -> list[tuple]:
    """The findings of ``source`` as (code, row, ((related message, row), ...)), after
    checking that the traced run printed and raised what the untraced one did.  Without
    ``deep`` both tracers run, and ``deep`` must find the same."""
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent(source))
    plain_out, plain_error, _ = run(path, None)
    found = {}
    for depth in (False, True) if deep is None else (deep,):
        out, error, findings = run(path, depth)
        assert out == plain_out
        assert type(error) is type(plain_error)
        if plain_error is not None:
            assert str(error).startswith(str(plain_error))
        found[depth] = [(d.code, d.location.row,
                         tuple((r.message, r.location.row) for r in d.related))
                        for d in findings]
    if deep is None:
        assert found[True] == found[False]
    return found[bool(deep)]


# --- what autograd raises, with the user's lines ------------------------------------------------


def test_scaling_a_split_query_in_place(tmp_path):
    """Attention that splits a fused projection and scales the query in place: autograd
    refuses to write one output of `split`."""
    source = """\
        import torch
        import torch.nn as nn


        class Attention(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.qkv = nn.Linear(dim, 3 * dim)

            def forward(self, x):
                q, k, v = self.qkv(x).split(x.shape[-1], dim=-1)
                q *= x.shape[-1] ** -0.5
                return torch.softmax(q @ k.transpose(-2, -1), -1) @ v


        attention = Attention(8)
        print(attention(torch.randn(2, 5, 8)).shape)
    """
    assert traced(tmp_path, source) == [
        ("AL106", 12, (("`split` made the view here", 11),))]


def test_view_taken_under_no_grad_then_written_with_grad_on(tmp_path):
    """Masked patch update: the patch is sliced inside `no_grad` (as a "cheap" view), then
    written in place outside it."""
    source = """\
        import torch

        features = torch.randn(4, 16, requires_grad=True)
        hidden = features * 2.0
        with torch.no_grad():
            patch = hidden[:, :4]
        mask = (torch.rand(4, 4) > 0.5).float()
        patch.mul_(mask)
        print(hidden.sum().item())
    """
    assert traced(tmp_path, source) == [
        ("AL106", 8, (("`__getitem__` made the view here", 6),))]


def test_view_returned_by_a_custom_function_written_in_place(tmp_path):
    source = """\
        import torch


        class StraightThrough(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.view_as(x)

            @staticmethod
            def backward(ctx, grad):
                return grad


        logits = torch.randn(3, 5, requires_grad=True) * 1.0
        hard = StraightThrough.apply(logits)
        hard.clamp_(min=0.0)
        print(hard.sum().item())
    """
    assert traced(tmp_path, source) == [
        ("AL106", 16, (("`StraightThrough` made the view here", 15),))]


def test_out_call_whose_input_requires_grad_is_reported_at_the_call(tmp_path):
    source = """\
        import torch
        from torch import nn

        table = nn.Embedding(20, 4)
        staging = torch.empty(3, 4)
        ids = torch.tensor([1, 5, 7])
        torch.index_select(table.weight, 0, ids, out=staging)
        print(staging.sum().item())
    """
    assert traced(tmp_path, source) == [("AL106", 7, ())]


def test_out_call_into_a_parameter_is_the_leaf_rule(tmp_path):
    source = """\
        import torch
        from torch import nn

        layer = nn.Linear(4, 4)
        for p in layer.parameters():
            torch.nan_to_num(p, nan=0.0, out=p)
        print(layer.weight.sum().item())
    """
    assert traced(tmp_path, source) == [("AL102", 6, ())]


def test_out_calls_under_no_grad_or_on_plain_tensors_are_quiet(tmp_path):
    source = """\
        import torch
        from torch import nn

        layer = nn.Linear(4, 4)
        with torch.no_grad():
            for p in layer.parameters():
                torch.nan_to_num(p, nan=0.0, out=p)
        a, b = torch.randn(3), torch.randn(3)
        buf = torch.empty(3)
        torch.add(a, b, out=buf)
        print(buf.sum().item())
    """
    assert traced(tmp_path, source) == []


_DOUBLE = """\
    import torch


    class Double_(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2.0)
            {mark}
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2.0


    torch.manual_seed(0)
    fc = torch.nn.Linear(4, 4)
    h = fc(torch.randn(3, 4))
    out = Double_.apply(h) + h
    out.sum().backward()
    print(torch.allclose(fc.bias.grad, torch.full((4,), 12.0)))
"""


def test_function_writing_its_input_without_mark_dirty_is_reported_at_the_write(tmp_path):
    """No error: autograd keeps `h`'s old history, and the residual's gradient is wrong."""
    source = _DOUBLE.replace("{mark}", "pass")
    assert traced(tmp_path, source) == [
        ("AL208", 7, (("the Function is applied here", 19),))]
    out, error, _ = run(tmp_path / "prog.py", None)
    assert error is None and out.strip() == "False"


def test_function_that_marks_its_written_input_dirty_is_quiet(tmp_path):
    source = _DOUBLE.replace("{mark}", "ctx.mark_dirty(x)")
    assert traced(tmp_path, source) == []
    out, _, _ = run(tmp_path / "prog.py", None)
    assert out.strip() == "True"


def test_function_updating_a_buffer_that_needs_no_grad_is_quiet(tmp_path):
    """A batch-norm-like Function updates its running mean in forward: not differentiated."""
    source = """\
        import torch


        class Center(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, running):
                running.mul_(0.9).add_(0.1 * x.mean(0))
                return x - x.mean(0)

            @staticmethod
            def backward(ctx, grad):
                return grad - grad.mean(0), None


        running = torch.zeros(4)
        x = torch.randn(8, 4, requires_grad=True)
        Center.apply(x, running).pow(2).sum().backward()
        print(x.grad.shape)
    """
    assert traced(tmp_path, source) == []


def test_function_marking_dirty_an_input_it_does_not_return(tmp_path):
    source = """\
        import torch


        class ClampHead_(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.clamp_(min=0.0)
                ctx.mark_dirty(x)
                return x[:, :2]

            @staticmethod
            def backward(ctx, grad):
                return grad


        h = torch.randn(3, 4, requires_grad=True) * 1.0
        head = ClampHead_.apply(h)
        head.sum().backward()
    """
    assert traced(tmp_path, source) == [
        ("AL106", 17, (("its `forward` is defined here", 6),))]


def test_function_writing_an_input_another_op_saved(tmp_path):
    source = """\
        import torch


        class Scale_(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(0.5)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad * 0.5


        w = torch.randn(3, 4, requires_grad=True)
        gate = torch.sigmoid(w * 1.0)
        Scale_.apply(gate).sum().backward()
    """
    assert traced(tmp_path, source) == [
        ("AL101", 7, (("saved for backward here", 17), ("backward runs here", 18)))]


def test_sgd_update_of_a_leaf_outside_no_grad(tmp_path):
    source = """\
        import torch

        weight = torch.randn(3, requires_grad=True)
        for step in range(2):
            loss = (weight * torch.arange(3.0)).pow(2).sum()
            loss.backward()
            weight -= 0.1 * weight.grad
        print(weight)
    """
    assert traced(tmp_path, source) == [("AL102", 7, ())]


def test_running_statistics_buffer_made_by_expand(tmp_path):
    """A whitening layer whose running matrix buffer is an `expand` of the identity: the
    running update writes elements that are one memory location."""
    source = """\
        import torch
        import torch.nn as nn


        class Whitening(nn.Module):
            def __init__(self, groups, channels):
                super().__init__()
                self.register_buffer("running_wm", torch.eye(channels).expand(
                    groups, channels, channels))

            def forward(self, x):
                cov = torch.einsum("gnc,gnd->gcd", x, x) / x.shape[1]
                with torch.no_grad():
                    self.running_wm.mul_(0.9).add_(0.1 * cov)
                return x


        layer = Whitening(2, 3)
        print(layer(torch.randn(2, 10, 3)).shape)
    """
    assert traced(tmp_path, source) == [
        ("AL203", 14, (("`expand` made it here", 8),))]


def test_saved_tensor_written_before_backward_names_all_three_lines(tmp_path):
    source = """\
        import torch
        import torch.nn as nn

        gate_proj = nn.Linear(6, 6)
        x = torch.randn(4, 6)
        gate = torch.sigmoid(gate_proj(x))
        gate.masked_fill_(gate < 0.1, 0.0)
        loss = (gate * x).sum()
        loss.backward()
    """
    assert traced(tmp_path, source) == [
        ("AL101", 7, (("saved for backward here", 6), ("backward runs here", 9)))]


def test_overlapping_copy_between_views_of_one_buffer(tmp_path):
    """Shifting a sequence buffer by one step with a copy between two of its slices."""
    source = """\
        import torch

        history = torch.arange(8.0)
        older = history[:-1]
        history[1:].copy_(older)
        print(history)
    """
    assert traced(tmp_path, source) == [
        ("AL203", 5, (("overlapping view created here", 4),))]


def test_augmented_assignment_into_a_slice_is_a_copy_onto_itself(tmp_path):
    """`x[1:4] += v` adds in place through the view, then `__setitem__` copies that view onto
    the elements it covers: identical memory, no hazard.  The shapes of real code: a
    residual added into a slice of a buffer, a diffusion-style shifted update
    (`V[:-n] += w * V[n:]`), a 2-D column block scaled, an integer-indexed row, a
    NumPy-integer slice bound, and a strided slice written from its own values."""
    source = """\
        import numpy as np
        import torch

        cache = torch.zeros(2, 16, 8)
        step = torch.ones(2, 4, 8)
        cache[:, 4:8] += step
        V = torch.arange(10.0)
        n, w = 2, 0.5
        V[:-n] += w * V[n:]
        grid = torch.rand(4, 6)
        grid[:, 1:3] *= 2.0
        grid[2] -= 1.0
        grid[..., np.int64(4)] /= 4.0
        lanes = torch.arange(8.0)
        lanes[::2] = lanes[::2] + 0
        lanes[1::2] += 1.0
        print(cache.sum().item(), V.sum().item(), grid.sum().item(), lanes.sum().item())
    """
    assert traced(tmp_path, source) == []


def test_partial_overlap_between_slices_is_still_reported(tmp_path):
    """The buggy twins: the written and read slices cover different elements that
    intersect.  In 2-D torch does not refuse it and the result is wrong (the shift smears
    the first column: row 0 becomes 0, 0, 0, 3 instead of 0, 0, 1, 3); in 1-D torch raises."""
    source = """\
        import torch

        grid = torch.tensor([[0.0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]])
        grid[:, 1:3] = grid[:, 0:2]
        print(grid[0].tolist())
        lanes = torch.arange(8.0)
        lanes[::2] = lanes[1::2]
        seq = torch.arange(8.0)
        seq[1:4] += seq[0:3]
    """
    assert traced(tmp_path, source) == [
        ("AL203", 4, (("overlapping view created here", 4),)),
        ("AL203", 9, (("overlapping view created here", 9),))]


def test_regions_of_basic_indexing_and_their_element_sets():
    from aliaslint.runtime.regions import Region

    x = torch.arange(24.0).reshape(4, 6)
    whole = Region.of(x)
    for key in (1, -1, slice(1, 3), (slice(None), slice(1, 3)), (Ellipsis, 2),
                (None, 2, slice(None, None, 2)), (slice(5, 9),), ()):
        assert whole.index(key).canonical() == Region.of(x[key]).canonical(), key
    for advanced in (torch.tensor([0, 1]), [0, 2], True, (slice(None), [1])):
        assert whole.index(advanced) is None
    # The same elements laid out differently; interleaved slices share none.
    assert Region.of(x).same_elements(Region.of(x.t()))
    assert Region.of(x).same_elements(Region.of(x.view(24)))
    flat = torch.arange(8.0)
    assert not Region.of(flat[::2]).intersects(Region.of(flat[1::2]))
    assert Region.of(flat[1:4]).intersects(Region.of(flat[0:3]))
    assert not Region.of(flat[1:4]).same_elements(Region.of(flat[0:3]))


def test_inplace_activation_with_a_negative_slope_is_reported_at_the_call(tmp_path):
    """torch refuses the backward of an in-place `leaky_relu` with a negative slope, and of
    `elu`/`celu` with a negative alpha (functional, `_` and module forms): each is reported at
    the in-place call (the module's at its constructor, the call related), before the backward
    pass raises."""
    source = """\
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        w = torch.randn(6, requires_grad=True)
        for make in (lambda: F.leaky_relu(w * 2, -0.1, inplace=True),
                     lambda: F.elu(w * 3, alpha=-0.5, inplace=True),
                     lambda: torch.celu_(w * 4, -0.5),
                     lambda: nn.LeakyReLU(-0.2, inplace=True)(w * 5)):
            try:
                make().sum().backward()
            except RuntimeError as error:
                print("backward raised:", "negative slope" in str(error))
    """
    assert traced(tmp_path, source) == [
        ("AL105", 6, ()), ("AL105", 7, ()), ("AL105", 8, ()),
        ("AL105", 9, (("the in-place write runs here", 9),))]
    out, error, _ = run(tmp_path / "prog.py", None)  # untraced: torch raises at each backward
    assert error is None and out.count("backward raised: True") == 4


def test_inplace_rrelu_in_eval_mode_with_a_negative_slope_is_reported(tmp_path):
    """In eval mode (`training=False`, the default of `F.rrelu`, `F.rrelu_` and
    `torch.rrelu_`) an in-place rrelu is a leaky ReLU of slope (lower + upper) / 2, whose
    backward refuses a negative one as `leaky_relu_`'s does: the call forms are reported at
    the call, the module at its constructor; its training mode (slopes drawn per element and
    kept) and bounds whose mean is not negative run backward and are not reported."""
    source = """\
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        w = torch.randn(6, requires_grad=True)
        act = nn.RReLU(-0.3, -0.1, inplace=True)
        for make in (lambda: F.rrelu(w * 2, -0.3, -0.1, inplace=True),
                     lambda: torch.rrelu_(w * 3, -5.0, 1.0),
                     lambda: F.rrelu_(w * 4, lower=-0.6, upper=0.5),
                     lambda: act.eval()(w * 5),
                     lambda: act.train()(w * 6),
                     lambda: F.rrelu(w * 7, -0.5, 0.5, inplace=True)):
            try:
                make().sum().backward()
                print("backward ran")
            except RuntimeError as error:
                print("backward raised:", "negative slope" in str(error))
    """
    # The default tracer (the deep one sees `rrelu_with_noise` write its noise buffer).
    assert traced(tmp_path, source, deep=False) == [
        ("AL105", 6, (("the in-place write runs here", 10),)),
        ("AL105", 7, ()), ("AL105", 8, ()), ("AL105", 9, ())]
    out, error, _ = run(tmp_path / "prog.py", None)  # untraced: torch raises at four of six
    assert error is None
    assert out.count("backward raised: True") == 4 and out.count("backward ran") == 2


def test_inplace_module_with_a_negative_slope_is_reported_where_it_is_built(tmp_path):
    """An in-place module's write is written where the module is built: the finding is at
    the constructor, the call that runs it related (as the static AL105 has it); one module
    run twice is one finding."""
    source = """\
        import torch
        import torch.nn as nn


        class Block(nn.Module):
            def __init__(self, dim: int) -> None:
                super().__init__()
                self.fc = nn.Linear(dim, dim)
                self.act = nn.LeakyReLU(-0.2, inplace=True)

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return self.act(self.fc(x))


        block = Block(4)
        for step in range(2):
            try:
                block(torch.randn(3, 4)).sum().backward()
            except RuntimeError as error:
                print("backward raised:", "negative slope" in str(error))
    """
    assert traced(tmp_path, source) == [
        ("AL105", 9, (("the in-place write runs here", 12),))]
    out, _, _ = run(tmp_path / "prog.py", None)
    assert out.count("backward raised: True") == 2


def test_inplace_module_overwriting_a_saved_output_is_reported_where_it_is_built(tmp_path):
    """`nn.ReLU(inplace=True)` on a sigmoid's output, which sigmoid's backward reads: at the
    constructor, with the call, the saving op and the backward related."""
    source = """\
        import torch
        import torch.nn as nn


        class Gate(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.proj = nn.Linear(8, 8)
                self.act = nn.ReLU(inplace=True)

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                gate = torch.sigmoid(self.proj(x))
                return self.act(gate) * x


        model = Gate()
        loss = model(torch.randn(4, 8)).sum()
        loss.backward()
    """
    assert traced(tmp_path, source) == [
        ("AL105", 9, (("the in-place write runs here", 13), ("saved for backward here", 12),
                      ("backward runs here", 18)))]


def test_inplace_module_built_through_a_torch_superclass_is_reported_where_it_is_built(
        tmp_path):
    """`nn.ReLU6(True)` (positional `inplace`) is built through `Hardtanh.__init__`: the
    line that builds it is still the user's."""
    source = """\
        import torch
        import torch.nn as nn

        act = nn.ReLU6(True)
        x = torch.randn(5, requires_grad=True)
        y = torch.sigmoid(x)
        act(y)
        try:
            y.sum().backward()
        except RuntimeError as error:
            print("backward raised:", "inplace" in str(error))
    """
    assert traced(tmp_path, source) == [
        ("AL105", 4, (("the in-place write runs here", 7), ("saved for backward here", 6),
                      ("backward runs here", 9)))]


def test_inplace_module_a_library_builds_is_reported_at_the_users_call(tmp_path, monkeypatch):
    """A module built by an installed package: its constructor is not the user's to change,
    so the write is reported where the user's code runs it (as any write inside a
    library), as AL101."""
    library = tmp_path / "site-packages"
    library.mkdir()
    (library / "trunk.py").write_text(textwrap.dedent("""\
        import torch.nn as nn


        def make() -> nn.Module:
            return nn.ReLU(inplace=True)
    """))
    monkeypatch.syspath_prepend(str(library))
    source = """\
        import torch
        import trunk

        act = trunk.make()
        x = torch.randn(5, requires_grad=True)
        y = torch.sigmoid(x)
        act(y)
        try:
            y.sum().backward()
        except RuntimeError as error:
            print("backward raised:", "inplace" in str(error))
    """
    assert traced(tmp_path, source) == [
        ("AL101", 7, (("saved for backward here", 6), ("backward runs here", 9)))]


def test_inplace_activation_whose_backward_accepts_it_is_clean(tmp_path):
    """The correct twins: a positive slope, `rrelu_` with its default bounds and in training
    mode with negative ones (its backward uses the slopes it drew), no grad needed, grad mode
    off; backward runs."""
    source = """\
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        w = torch.randn(6, requires_grad=True)
        F.leaky_relu(w * 2, 0.1, inplace=True).sum().backward()
        nn.ELU(alpha=0.5, inplace=True)(w * 3).sum().backward()
        F.rrelu(w * 4, inplace=True).sum().backward()
        F.rrelu(w * 6, -0.3, -0.1, training=True, inplace=True).sum().backward()
        F.leaky_relu(torch.randn(6), -0.1, inplace=True)
        with torch.no_grad():
            F.celu(w * 5, -0.5, inplace=True)
        print(w.grad is not None)
    """
    # The default tracer (the deep one sees `rrelu_with_noise` write its noise buffer).
    assert traced(tmp_path, source, deep=False) == []


# --- silent writes through views, expanded memory, NumPy -----------------------------------------


def test_item_assignment_into_a_transposed_view_changes_the_base(tmp_path):
    source = """\
        import torch
        import torch.nn as nn

        model = nn.Linear(6, 2)
        batch = torch.randn(6, 6)
        columns = batch.t()
        columns[0, 1] = 0.0
        out = model(batch)
        print(out.shape)
    """
    assert traced(tmp_path, source) == [
        ("AL201", 7, (("view created here", 6), ("base read here", 8)))]


def test_masked_item_assignment_into_a_slice_changes_the_base(tmp_path):
    """`index_put_` through a slice kept under a name (padding positions masked)."""
    source = """\
        import torch
        import torch.nn as nn

        head = nn.Linear(8, 3)
        hidden = torch.randn(5, 8)
        padded = hidden[2:]
        padded[padded.abs() > 1.5] = 0.0
        print(head(hidden).shape)
    """
    assert traced(tmp_path, source) == [
        ("AL201", 7, (("view created here", 6), ("base read here", 8)))]


ERASE_PER_SAMPLE = """\
    import random

    import torch
    import torch.nn as nn


    def erase(img, height, width):
        top = random.randint(0, height - 2)
        img[:, top:top + 2, 0:2] = torch.zeros(img.shape[0], 2, 2)


    def erase_batch(batch):
        for i in range(batch.shape[0]):
            {call}
        return batch


    random.seed(0)
    stem = nn.Conv2d(3, 4, 3)
    images = erase_batch(torch.rand(4, 3, 8, 8))
    print(stem(images).shape)
"""


def test_a_helper_writing_the_view_it_was_passed_updates_the_batch_on_purpose(tmp_path):
    """timm's RandomErasing on a batch (`self._erase(input[i], ...)`, writing `img[...]`):
    the view is an argument of the call that writes it, made on the caller's line that is
    still running, as `x[i].zero_()` makes and writes one on one line.  Not AL201."""
    source = ERASE_PER_SAMPLE.format(call="erase(batch[i], batch.shape[2], batch.shape[3])")
    assert traced(tmp_path, source) == []


def test_a_named_view_a_helper_writes_still_changes_the_base(tmp_path):
    """The same helper given a view kept under a name of its own."""
    source = ERASE_PER_SAMPLE.format(
        call="sample = batch[i]\n            erase(sample, batch.shape[2], batch.shape[3])")
    assert traced(tmp_path, source) == [
        ("AL201", 9, (("view created here", 14), ("base read here", 22)))]


def test_item_assignment_into_expanded_positions_writes_every_row(tmp_path):
    source = """\
        import torch

        positions = torch.arange(6).expand(3, 6)
        positions[0, 5] = 0
        print(positions[2])
    """
    assert traced(tmp_path, source) == [("AL203", 4, (("`expand` made it here", 3),))]


def test_numpy_side_standardisation_after_sharing(tmp_path):
    source = """\
        import numpy as np
        import torch
        import torch.nn as nn

        model = nn.Linear(3, 1)
        raw = np.random.default_rng(0).normal(size=(8, 3)).astype(np.float32)
        inputs = torch.from_numpy(raw)
        raw -= raw.mean(axis=0)
        loss = model(inputs).pow(2).mean()
        loss.backward()
        print(round(loss.item(), 4))
    """
    assert traced(tmp_path, source) == [
        ("AL301", 9, (("shared with NumPy here", 7),))]


def test_numpy_side_write_after_tensor_numpy(tmp_path):
    source = """\
        import torch
        import torch.nn as nn

        model = nn.Linear(4, 2)
        state = torch.zeros(3, 4)
        view = state.numpy()
        view[:, 0] = 1.0
        print(model(state).sum().item())
    """
    assert traced(tmp_path, source) == [
        ("AL301", 8, (("shared with NumPy here", 6),))]


def test_numpy_side_write_before_any_torch_read_is_quiet(tmp_path):
    """Filling the array, then sharing it, then only reading: nothing changed behind torch."""
    source = """\
        import numpy as np
        import torch
        import torch.nn as nn

        model = nn.Linear(3, 1)
        raw = np.ones((4, 3), dtype=np.float32)
        raw *= 2.0
        inputs = torch.from_numpy(raw)
        model(inputs).sum().backward()
        print(model.weight.grad.sum().item())
    """
    assert traced(tmp_path, source) == []


# --- runtime precision: what must stay quiet ------------------------------------------------------


def test_write_to_a_saved_output_no_backward_reads(tmp_path):
    """The gate's saved output is rescaled for display under `no_grad`; the loss is built
    from the logits alone, so no backward pass reads the changed tensor."""
    source = """\
        import torch
        import torch.nn.functional as F

        logits = torch.randn(4, 3, requires_grad=True)
        probabilities = torch.sigmoid(logits)
        with torch.no_grad():
            probabilities.mul_(100.0)
        loss = F.cross_entropy(logits, torch.tensor([0, 1, 2, 0]))
        loss.backward()
        print(probabilities.round().sum().item())
    """
    assert traced(tmp_path, source) == []


def test_gradcheck_perturbations_are_not_the_users_writes(tmp_path):
    source = """\
        import torch


        def swish(x):
            return x * torch.sigmoid(x)


        x = torch.randn(5, dtype=torch.double, requires_grad=True)
        print(torch.autograd.gradcheck(swish, (x,)))
    """
    assert traced(tmp_path, source) == []


def test_set_to_a_slice_of_itself_is_not_an_overlapping_write(tmp_path):
    """A queue that drops its oldest entry by pointing at its own tail."""
    source = """\
        import torch

        queue = torch.arange(6.0)
        queue.set_(queue[1:])
        print(queue)
    """
    assert traced(tmp_path, source) == []


def test_activation_checkpointing_keeps_tracing_and_stays_quiet(tmp_path):
    source = """\
        import torch
        import torch.nn as nn
        from torch.utils.checkpoint import checkpoint

        block = nn.Sequential(nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 8))
        head = nn.Linear(8, 1)
        x = torch.randn(4, 8, requires_grad=True)
        hidden = checkpoint(block, x, use_reentrant=False)
        loss = head(hidden).sum()
        loss.backward()
        print(round(x.grad.sum().item(), 4))
    """
    assert traced(tmp_path, source) == []


def test_write_to_a_checkpointed_input_is_reported_when_recomputation_reads_it(tmp_path):
    """Under activation checkpointing torch does not check versions: the recomputation
    silently uses the changed input.  The tracer still reports it."""
    source = """\
        import torch
        import torch.nn as nn
        from torch.utils.checkpoint import checkpoint

        block = nn.Sequential(nn.Linear(8, 8), nn.Tanh())
        x = torch.randn(4, 8)
        hidden = checkpoint(block, x, use_reentrant=False)
        x.mul_(2.0)
        hidden.sum().backward()
        print(block[0].weight.grad.shape)
    """
    assert traced(tmp_path, source) == [
        ("AL101", 8, (("saved for backward here", 7), ("backward runs here", 9)))]


def test_save_on_cpu_without_a_copy_still_reports_the_write(tmp_path):
    """`save_on_cpu` moves saved tensors to the CPU; a tensor already there is kept as it is
    (`.cpu()` returns it), so the backward pass reads the changed input, and torch checks no
    versions under these hooks.  Outside the block the tracer's own hooks are back."""
    source = """\
        import torch
        import torch.nn as nn

        layer = nn.Linear(6, 6)
        x = torch.randn(3, 6)
        with torch.autograd.graph.save_on_cpu():
            y = layer(x)
        x.add_(1.0)
        y.sum().backward()
        print(layer.weight.grad.sum().item())
        z = torch.sigmoid(layer(x))
        z.mul_(2.0)
        try:
            z.sum().backward()
        except RuntimeError as error:
            print(type(error).__name__)
    """
    assert traced(tmp_path, source) == [
        ("AL101", 8, (("saved for backward here", 7), ("backward runs here", 9))),
        ("AL101", 12, (("saved for backward here", 11), ("backward runs here", 14)))]


# --- what only --deep sees ------------------------------------------------------------------------


def test_write_made_below_python_is_found_by_deep_only(tmp_path):
    """A call straight to the ATen op bypasses the Python methods the default tracer wraps."""
    source = """\
        import torch

        x = torch.randn(5, requires_grad=True)
        y = torch.exp(x)
        torch.ops.aten.mul_.Scalar(y, 2.0)
        try:
            y.sum().backward()
        except RuntimeError:
            print("refused")
    """
    assert traced(tmp_path, source, deep=False) == [
        ("AL101", 4, (("backward runs here", 7),))]
    assert traced(tmp_path, source, deep=True) == [
        ("AL101", 5, (("saved for backward here", 4), ("backward runs here", 7)))]


def test_plain_read_of_the_base_is_seen_by_deep_only(tmp_path):
    """The default tracer sees a read where the tensor is saved, written or shared; a sum
    saves nothing."""
    source = """\
        import torch

        scores = torch.randn(4, 4)
        upper = scores[:2]
        upper.zero_()
        print(scores.sum().item())
    """
    assert traced(tmp_path, source, deep=False) == []
    assert traced(tmp_path, source, deep=True) == [
        ("AL201", 5, (("view created here", 4), ("base read here", 6)))]
