"""Precision on released code: which elements a view reaches, a loop's fresh tensors, and
aliasing that only some sizes make.

Each case is a correct program and its buggy twin.  The findings are asserted exactly, and
both run under torch: the hazard claimed for the twin happens, and the correct program is
healthy (what it reads is the same whether the write is made or not, or whether the second
name is a copy or not)."""

import textwrap
import warnings

import pytest
from conftest import lint

from aliaslint import check_source

torch = pytest.importorskip("torch")


def _run(source: str, call: str, *, drop: str | None = None, replace: tuple = ()):
    """Run ``source`` (dedented) and return ``call`` evaluated in it; ``drop`` removes the
    line holding that text, ``replace`` = (old, new) rewrites it first."""
    text = textwrap.dedent(source)
    if drop is not None:
        text = "\n".join(line for line in text.splitlines() if drop not in line)
    if replace:
        text = text.replace(*replace)
    scope: dict = {}
    exec(compile(text, "<case>", "exec"), scope)  # noqa: S102 - the test's own programs
    torch.manual_seed(0)
    return eval(call, scope)  # noqa: S307


def _same(a, b) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a, b)) if isinstance(a, tuple) else \
        torch.equal(a, b)


def _read_sees_write(source: str, call: str, write: str) -> bool:
    """Does what the program returns change when the write is left out?"""
    return not _same(_run(source, call), _run(source, call, drop=write))


# --------------------------------------------------------------------------- element covers

# A banded precision matrix: the main diagonal is raised through a view, the band above it
# is read through another one.  No element of the upper band is on the main diagonal.
TRIDIAGONAL = """
    import torch


    def tridiagonal(T, scale):
        sigmas = torch.ones(T, T) * scale
        main = torch.diagonal(sigmas, offset=0)
        main += 1.0
        upper = torch.diagonal(sigmas, offset=1)
        return upper.clone()
    """
# The twin reads the main diagonal again, by another view: it sees the write.
TRIDIAGONAL_TWIN = TRIDIAGONAL.replace("torch.diagonal(sigmas, offset=1)", "sigmas.diagonal()")

# Interleaved channels (even and odd positions of a signal) scaled apart.
EVEN_ODD = """
    import torch


    def mix(n):
        signal = torch.randn(n) * 2
        evens = signal[::2]
        evens.mul_(3)
        odds = signal[1::2]
        return odds.clone()
    """
# Every fourth sample is an even one: the read overlaps the write.
EVEN_ODD_TWIN = EVEN_ODD.replace("signal[1::2]", "signal[::4]")

# Rows of a batch: the first two are normalised through `narrow`, the next three read.
ROWS = """
    import torch


    def rows(n):
        batch = torch.randn(n, 4) * 2
        head = batch.narrow(0, 0, 2)
        head.div_(head.norm())
        rest = batch.narrow(0, 2, 3)
        return rest.clone()
    """
ROWS_TWIN = ROWS.replace("batch.narrow(0, 2, 3)", "batch.narrow(0, 1, 3)")

# One channel of a batch scaled through `select`, another channel read.
CHANNELS = """
    import torch


    def channels(n):
        batch = torch.randn(n, 3) + 1
        red = batch.select(1, 0)
        red.mul_(0.5)
        green = batch.select(1, 1)
        return green.clone()
    """
CHANNELS_TWIN = CHANNELS.replace("batch.select(1, 1)", "batch.select(1, -3)")

# The diagonal zeroed, then one element read: off the diagonal, or on it.
CELL = """
    import torch


    def cell(n):
        scores = torch.randn(n, n) * 2
        diagonal = scores.diagonal()
        diagonal.zero_()
        return scores[0, 1].clone()
    """
CELL_TWIN = CELL.replace("scores[0, 1]", "scores[1, 1]")

COVERS = [
    (TRIDIAGONAL, TRIDIAGONAL_TWIN, "tridiagonal(4, 2.0)", "main += 1.0", (8, "AL201")),
    (EVEN_ODD, EVEN_ODD_TWIN, "mix(8)", "evens.mul_(3)", (8, "AL201")),
    (ROWS, ROWS_TWIN, "rows(6)", "head.div_(head.norm())", (8, "AL201")),
    (CHANNELS, CHANNELS_TWIN, "channels(4)", "red.mul_(0.5)", (8, "AL201")),
    (CELL, CELL_TWIN, "cell(3)", "diagonal.zero_()", (8, "AL201")),
]


@pytest.mark.parametrize(("correct", "twin", "call", "write", "finding"), COVERS,
                         ids=["diagonals", "steps", "narrow", "select", "element"])
def test_a_read_of_elements_the_write_did_not_reach_is_no_hazard(correct, twin, call, write,
                                                                  finding):
    assert lint(correct) == []
    assert not _read_sees_write(correct, call, write)
    assert lint(twin) == [finding]
    assert _read_sees_write(twin, call, write)


def test_views_of_unknown_extent_stay_unproven():
    """A computed offset says nothing about which elements a view reaches."""
    source = """
        import torch


        def band(n, k):
            m = torch.ones(n, n) * 2
            main = m.diagonal()
            main += 1.0
            return m.diagonal(k).sum()
        """
    assert lint(source) == [(8, "AL201")]


# --------------------------------------------------------------------------- loops

# Each outer step allocates its output and fills it by slices from the step before;
# `x = output` hands the new tensor on.  The next step's `output` is another tensor.
DECODER = """
    import torch


    def decode(x, steps):
        for _ in range(steps):
            output = torch.zeros(4, 8)
            output[:, :4] = x[:, 4:] * 2
            output[:, 4:] = x[:, :4] + 1
            x = output
        return x
    """
# The twin allocates the output once, before the loop: from the second step on, `x` is
# `output`, and the second slice reads what the first one has just overwritten.
DECODER_TWIN = """
    import torch


    def decode(x, steps):
        output = torch.zeros(4, 8)
        for _ in range(steps):
            output[:, :4] = x[:, 4:] * 2
            output[:, 4:] = x[:, :4] + 1
            x = output
        return x
    """


def test_an_allocation_in_a_loop_is_a_new_tensor_each_iteration():
    assert lint(DECODER) == []
    assert lint(DECODER_TWIN) == [(10, "AL207")]
    start = "decode(torch.arange(32.0).reshape(4, 8), 3)"
    copied = ("x = output", "x = output.clone()")
    assert _same(_run(DECODER, start), _run(DECODER, start, replace=copied))
    assert not _same(_run(DECODER_TWIN, start), _run(DECODER_TWIN, start, replace=copied))


def test_a_tensor_allocated_before_the_loop_and_written_in_it_is_still_found():
    source = """
        import torch


        def accumulate(batches):
            total = torch.zeros(3)
            previous = total
            for batch in batches:
                total.add_(batch)
                print(previous)
        """
    assert lint(source) == [(7, "AL207")]


def test_a_view_of_the_previous_iterations_tensor_is_not_a_view_of_this_one():
    """`prev = buf[0]` kept from the iteration before; this iteration's `buf` is written."""
    source = """
        import torch


        def step(n):
            prev = None
            for i in range(n):
                buf = torch.zeros(4, 3)
                if prev is not None:
                    buf[1:] = prev
                buf[0].fill_(i)
                prev = buf[0]
            return prev
        """
    assert lint(source) == []
    assert torch.equal(_run(source, "step(3)"), torch.full((3,), 2.0))


# --------------------------------------------------------------------------- sizes decide

# A merge of a transposed matrix's dims: with both sizes known and > 1 the strides cannot
# express it, so `reshape` copies and the write never reaches `x`.
COPY_PROVEN = """
    import torch


    def flat():
        x = torch.randn(3, 4)
        y = x.t().reshape(12)
        y.add_(1)
        return x.clone()
    """
# Its twin splits a dim instead: `reshape` is a view, the write changes `x`.
VIEW_PROVEN = COPY_PROVEN.replace("reshape(12)", "reshape(2, 2, 3)")

# Sizes not known: a view only when one of them is 1.
SIZES_DECIDE = """
    import torch


    def flat(a, b):
        x = torch.randn(a, b)
        y = x.t().reshape(-1)
        y.add_(1)
        return x.clone()
    """


def test_where_the_layout_proves_a_copy_there_is_no_finding():
    assert lint(COPY_PROVEN) == []
    assert not _read_sees_write(COPY_PROVEN, "flat()", "y.add_(1)")
    assert lint(VIEW_PROVEN) == [(8, "AL201")]
    assert _read_sees_write(VIEW_PROVEN, "flat()", "y.add_(1)")


def test_aliasing_that_needs_a_rare_size_is_low():
    assert lint(SIZES_DECIDE) == []
    (finding,) = check_source(textwrap.dedent(SIZES_DECIDE), "t.py", ["AL205"],
                              confidence="low")
    assert (finding.location.row, finding.code, finding.confidence) == (8, "AL205", "low")
    assert not _read_sees_write(SIZES_DECIDE, "flat(3, 4)", "y.add_(1)")
    assert _read_sees_write(SIZES_DECIDE, "flat(1, 4)", "y.add_(1)")


def test_aliasing_the_dtype_decides_stays_high():
    """`.double()` of a float64 tensor is that tensor: a plain input of that dtype."""
    source = """
        import torch


        def clamped(p: torch.Tensor) -> torch.Tensor:
            q = p.double()
            q.clamp_(0.1, 0.9)
            return q.log()


        def main():
            predictions = torch.rand(4, dtype=torch.float64)
            clamped(predictions)
            return predictions
        """
    assert lint(source) == [(7, "AL205")]
    assert _same(_run(source, "main()"), torch.full((4,), 0.9, dtype=torch.float64).minimum(
        _run(source, "torch.rand(4, dtype=torch.float64)")).maximum(
        torch.tensor(0.1, dtype=torch.float64)))


def test_a_result_copied_back_into_its_source_is_no_ambiguous_write():
    source = """
        import torch


        def normal_(data: torch.Tensor) -> None:
            data.copy_(data.cpu().normal_(mean=0.0, std=0.02).to(data.device))
        """
    twin = """
        import torch


        def noisy(data: torch.Tensor) -> torch.Tensor:
            noise = data.cpu().normal_(mean=0.0, std=0.02)
            return data + noise
        """
    assert lint(source) == []
    assert lint(twin) == [(6, "AL205")]
    # On the CPU the twin's `data` is the noise itself: the sum doubles it.
    assert torch.equal(_run(twin, "noisy(torch.zeros(3))"), 2 * _run(
        twin, "torch.zeros(3).normal_(mean=0.0, std=0.02)"))


# --------------------------------------------------------------------------- second names

def test_an_identity_shortcut_before_a_comparison_of_values_is_no_sharing_test():
    source = """
        import torch


        def self_attention(query: torch.Tensor, key: torch.Tensor) -> bool:
            return query is key or torch.equal(query, key)
        """
    twin = source.replace(" or torch.equal(query, key)", "")
    assert lint(source) == []
    assert lint(twin) == [(6, "AL402")]
    # A view of the same values: the twin says "not the same", the shortcut-and-compare "same".
    x = torch.arange(6.0)
    assert _run(source, "self_attention")(x, x[:]) is True
    assert _run(twin, "self_attention")(x, x[:]) is False


def test_an_identity_test_against_a_conversion_asks_whether_it_copied():
    # A mixed-precision step: `work` is the parameter itself or a float32 copy of it.
    source = """
        import torch


        @torch.no_grad()
        def decay_(param: torch.Tensor, rate: float) -> bool:
            work = param.to(torch.float32)
            work.mul_(1 - rate)
            if work is not param:
                param.copy_(work)
            return work is not param
        """
    # The same test against a slice of the parameter: the slice is another object over the
    # parameter's memory, so `is not` holds for a float32 parameter too.
    twin = source.replace("if work is not param:", "if work is not param[0]:")
    assert lint(source) == []
    assert lint(twin) == [(9, "AL402")]
    low, full = torch.ones(2, dtype=torch.bfloat16), torch.ones(2)
    assert _run(source, "decay_")(low, 0.5) is True and low.tolist() == [0.5, 0.5]
    assert _run(source, "decay_")(full, 0.5) is False and full.tolist() == [0.5, 0.5]
    # In the twin, a float32 parameter's `work` is the parameter: `is not` says "a copy"
    # of a row that is the same memory.
    rows = torch.ones(2, 2)
    work = rows.to(torch.float32)
    assert work is not rows[0] and work.untyped_storage().data_ptr() == \
        rows[0].untyped_storage().data_ptr()


def test_the_calls_that_return_their_input_or_a_copy_never_return_a_view():
    # What the op tables' `returns_input` says, checked for the Tensor methods that take no
    # argument, on tensors of several dtypes, ranks and layouts.
    from aliaslint import ops
    names = [name.rpartition(".")[2] for name in ops.names()
             if name.startswith("torch.Tensor.") and ops.lookup(name).extra.get("returns_input")
             and name.rpartition(".")[2] not in ("cuda", "dequantize", "to_dense", "type")]
    assert {"float", "contiguous", "cpu", "resolve_conj"} <= set(names)
    samples = [torch.ones(()), torch.ones(3), torch.ones(2, 3).t(), torch.ones(2, 3, 4),
               torch.ones(3, dtype=torch.bfloat16), torch.ones(3, dtype=torch.int64),
               torch.ones(3, dtype=torch.complex64).conj()]
    for name in names:
        for x in samples:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # complex to real drops the imaginary part
                    result = getattr(x, name)()
            except (RuntimeError, TypeError):
                continue
            assert result is x or result.untyped_storage().data_ptr() != \
                x.untyped_storage().data_ptr(), name
    # reshape has no such fact: a contiguous input gives another object over its memory.
    x = torch.ones(2, 3)
    assert ops.method("reshape").extra.get("returns_input") is None
    assert x.reshape(-1) is not x and x.reshape(-1).data_ptr() == x.data_ptr()


# A packing step writes each sample's tokens back through a second name of the batch and
# hands that name back: nothing reads it for the values it had.
UNPACK = """
    import torch


    def unpack(hidden: torch.Tensor, masks: torch.Tensor, parts: list, n: int):
        latent = hidden
        for idx in range(n):
            latent[idx][masks[idx] == 1] = parts[idx]
        hidden = latent
        return hidden
    """
# The twin keeps the second name as the "before" state and compares: it sees the new values.
UNPACK_TWIN = UNPACK.replace("        hidden = latent\n        return hidden",
                             "        return (hidden - latent).abs().sum()")


def test_a_second_name_written_again_and_handed_back_is_no_snapshot():
    assert lint(UNPACK) == []
    assert lint(UNPACK_TWIN) == [(6, "AL207")]
    call = "unpack(torch.zeros(2, 3), torch.ones(2, 3), [torch.ones(3), torch.ones(3)], 2)"
    assert torch.equal(_run(UNPACK, call), torch.ones(2, 3))
    assert _run(UNPACK_TWIN, call) == 0  # the "before" state is the new one: the hazard


# --------------------------------------------------------------------------- filled through parts

# A rotary embedding that fills a tensor it has just made through its two halves: the read of
# `out` after both writes is the point of them.
ROTARY = """
    import torch


    def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        r = x.shape[-1] // 2
        split_x = x.reshape(*x.shape[:-1], 2, r).float()
        first_x = split_x[..., :1, :]
        second_x = split_x[..., 1:, :]
        cos_u = cos.unsqueeze(-2)
        sin_u = sin.unsqueeze(-2)
        out = split_x * cos_u
        first_out = out[..., :1, :]
        second_out = out[..., 1:, :]
        first_out.addcmul_(-sin_u, second_x)
        second_out.addcmul_(sin_u, first_x)
        return out.reshape(*out.shape[:-2], 2 * r)


    def reference(x, cos, sin):
        first, second = x.float().chunk(2, dim=-1)
        return torch.cat([first * cos - second * sin, second * cos + first * sin], dim=-1)


    def inputs():
        return torch.randn(2, 3, 8), torch.randn(2, 3, 4), torch.randn(2, 3, 4)
    """
# Only the first half is rotated: `out` is read half filled.
ROTARY_HALF = ROTARY.replace("        second_out.addcmul_(sin_u, first_x)\n", "")
# The second half is rotated on one path only.
ROTARY_BRANCH = ROTARY.replace(
    "sin: torch.Tensor) -> torch.Tensor:", "sin: torch.Tensor, both: bool) -> torch.Tensor:"
).replace("        second_out.addcmul_(sin_u, first_x)\n",
          "        if both:\n            second_out.addcmul_(sin_u, first_x)\n")
# The halves are the caller's tensor: the rotation lands in it.
ROTARY_ARGUMENT = """
    import torch


    def rotate(split_x: torch.Tensor, cos_u: torch.Tensor, sin_u: torch.Tensor) -> torch.Tensor:
        first_x = split_x[..., :1, :] * 1.0
        second_x = split_x[..., 1:, :] * 1.0
        first_out = split_x[..., :1, :]
        second_out = split_x[..., 1:, :]
        first_out.mul_(cos_u)
        first_out.addcmul_(-sin_u, second_x)
        second_out.mul_(cos_u)
        second_out.addcmul_(sin_u, first_x)
        return split_x.flatten(-2)
    """
# The scaled tensor is kept in an attribute before its halves are rotated: whoever reads
# `self.scaled` later gets the rotated values.
ROTARY_HELD = """
    import torch
    import torch.nn as nn


    class Rotate(nn.Module):
        def forward(self, split_x: torch.Tensor, cos_u: torch.Tensor,
                    sin_u: torch.Tensor) -> torch.Tensor:
            out = split_x * cos_u
            self.scaled = out
            first_out = out[..., :1, :]
            second_out = out[..., 1:, :]
            first_out.addcmul_(-sin_u, split_x[..., 1:, :])
            second_out.addcmul_(sin_u, split_x[..., :1, :])
            return out.flatten(-2)
    """
# Interleaved pairs (even and odd positions), and the rows of a batch split at row 1.
INTERLEAVED = """
    import torch


    def rotate_interleaved(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        x_even = x[..., 0::2]
        x_odd = x[..., 1::2]
        out = x * cos
        even = out[..., 0::2]
        odd = out[..., 1::2]
        even.addcmul_(-sin[..., 1::2], x_odd)
        odd.addcmul_(sin[..., 0::2], x_even)
        return out


    def shift_rows(x: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
        out = x * 2
        head = out[:1]
        tail = out[1:]
        head.sub_(shift)
        tail.add_(shift)
        return out.sum(0)
    """
# Row 1 is in neither part: the sum reads it as `x * 2`.
INTERLEAVED_GAP = INTERLEAVED.replace("tail = out[1:]", "tail = out[2:]")


def _shifted(x, shift):
    """What `shift_rows` means: every row of `x * 2` moved, the first down, the rest up."""
    return torch.cat([x[:1] * 2 - shift, x[1:] * 2 + shift]).sum(0)


def test_a_fresh_tensor_filled_through_parts_that_cover_it_is_no_hazard():
    assert lint(ROTARY) == []
    assert lint(INTERLEAVED) == []
    # Healthy: what `out` holds after the writes is the rotation the code means.
    x, cos, sin = _run(ROTARY, "inputs()")
    kept = x.clone()
    rotated = _run(ROTARY, "rotate")(x, cos, sin)
    assert torch.allclose(rotated, _run(ROTARY, "reference")(x, cos, sin))
    assert torch.equal(x, kept)  # the caller's tensor is left alone
    x, shift = torch.randn(3, 4), torch.randn(4)
    assert torch.allclose(_run(INTERLEAVED, "shift_rows")(x, shift), _shifted(x, shift))


def test_parts_that_leave_elements_unwritten_stay_reported():
    assert lint(ROTARY_HALF) == [(15, "AL201")]
    assert lint(ROTARY_BRANCH) == [(17, "AL201")]
    assert lint(INTERLEAVED_GAP) == [(21, "AL201")]
    x, cos, sin = _run(ROTARY, "inputs()")
    expected = _run(ROTARY, "reference")(x, cos, sin)
    # The read sees the written half beside one that was never rotated.
    assert not torch.allclose(_run(ROTARY_HALF, "rotate")(x, cos, sin), expected)
    assert not torch.allclose(_run(ROTARY_BRANCH, "rotate")(x, cos, sin, False), expected)
    assert torch.allclose(_run(ROTARY_BRANCH, "rotate")(x, cos, sin, True), expected)
    x, shift = torch.randn(3, 4), torch.randn(4)
    assert not torch.allclose(_run(INTERLEAVED_GAP, "shift_rows")(x, shift), _shifted(x, shift))


def test_parts_of_a_tensor_someone_else_holds_stay_reported():
    assert lint(ROTARY_ARGUMENT) == [(13, "AL201")]
    assert lint(ROTARY_HELD) == [(14, "AL201")]
    split_x, cos_u, sin_u = torch.randn(2, 2, 4), torch.randn(2, 1, 4), torch.randn(2, 1, 4)
    kept = split_x.clone()
    _run(ROTARY_ARGUMENT, "rotate")(split_x, cos_u, sin_u)
    assert not torch.equal(split_x, kept)  # the caller's tensor changed
    module = _run(ROTARY_HELD, "Rotate()")
    module(split_x, cos_u, sin_u)
    # `self.scaled` was kept as the scaled input; it now holds the rotation.
    assert not torch.allclose(module.scaled, split_x * cos_u)
