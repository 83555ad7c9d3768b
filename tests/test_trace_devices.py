"""Storage identity in the tracer: addresses are reused by allocators, storages are not.

The CPU tests drive the same logic the CUDA ones do (CUDA's caching allocator hands a freed
block's address to the next tensor at once); the CUDA tests are skipped without a GPU."""

from __future__ import annotations

import gc
import runpy
import textwrap

import pytest

import aliaslint

torch = pytest.importorskip("torch")

SIZE = 1 << 16

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


def reused_address(device: str):
    """A tensor whose storage starts where a freed tensor's did, made after the freed one
    had an `expand` view recorded at a user line (inside an open trace); None if the
    allocator never reused the address."""
    for _ in range(50):
        # Large enough that the allocator hands the block straight back.
        first = torch.arange(float(SIZE), device=device)
        address = first.data_ptr()
        view = first.expand(2, SIZE)
        del first, view
        second = torch.arange(float(SIZE), device=device)
        if second.data_ptr() == address:
            return second
    return None


def test_a_recorded_view_is_not_attributed_to_a_new_storage_at_the_same_address():
    with aliaslint.trace() as tracer:
        second = reused_address("cpu")
        if second is None:
            pytest.skip("the allocator did not reuse the address")
        # The same layout over the new storage, made by torch's own method (not recorded).
        lookalike = torch._C.TensorBase.expand(second, 2, SIZE)
        assert tracer._views.view_site(lookalike) is None
        fresh = second.expand(2, SIZE)
        assert tracer._views.view_site(fresh) is not None


def test_saved_records_are_forgotten_with_their_graph():
    with aliaslint.trace() as tracer:
        x = torch.randn(8, requires_grad=True)
        y = torch.sigmoid(x)
        assert tracer._saved.by_storage
        del y
        gc.collect()
        assert not tracer._saved.by_storage
        z = torch.sigmoid(x)
        z.sum().backward()
        assert not tracer._saved.by_storage  # freed by the backward pass


@cuda
@pytest.mark.cuda
def test_write_to_a_saved_cuda_tensor_is_reported():
    source = torch.randn(16, device="cuda", requires_grad=True)
    with aliaslint.trace() as tracer:
        gate = torch.sigmoid(source)
        gate.mul_(2.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            gate.sum().backward()
    assert [d.code for d in tracer.findings] == ["AL101"]


@cuda
@pytest.mark.cuda
def test_cuda_caching_allocator_reuse_is_not_identity():
    with aliaslint.trace() as tracer:
        second = reused_address("cuda")
        if second is None:
            pytest.skip("the caching allocator did not reuse the block")
        assert tracer._views.view_site(torch._C.TensorBase.expand(second, 2, SIZE)) is None


@cuda
@pytest.mark.cuda
def test_save_on_cpu_copy_makes_a_later_cuda_write_harmless():
    layer = torch.nn.Linear(8, 8).cuda()
    x = torch.randn(4, 8, device="cuda")
    with aliaslint.trace() as tracer:
        with torch.autograd.graph.save_on_cpu(pin_memory=True):
            y = layer(x)
        x.add_(1.0)  # the saved copy on the CPU is what backward reads
        y.sum().backward()
    assert tracer.findings == []


# A critic's training steps with WGAN's weight clipping put before `backward()` (AL103 at
# line 15: the clipped weight was saved, and backward reads the clipped values).  On CUDA
# every synchronising call (`.item()`, `.cpu()`, `nonzero`, a copy to the host) raises once
# the program has set the sync debug mode, so a tracer that synchronised would end the run.
SYNC_FREE_TRAINING = """\
    import torch
    import torch.nn as nn

    device = "{device}"
    critic = nn.Sequential(nn.Linear(8, 32), nn.LeakyReLU(0.2, inplace=True),
                           nn.Linear(32, 1)).to(device)
    optimizer = torch.optim.SGD(critic.parameters(), lr=1e-2, momentum=0.9)
    batches = [torch.randn(16, 8, device=device) for _ in range(6)]
    if device == "cuda":
        torch.cuda.set_sync_debug_mode("error")
    for step in range(3):
        real, fake = batches[2 * step], batches[2 * step + 1]
        loss = critic(fake).mean() - critic(real).mean()
        for p in critic.parameters():
            p.data.clamp_(-0.01, 0.01)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    if device == "cuda":
        torch.cuda.set_sync_debug_mode("default")
"""


def traced_training(tmp_path, device: str, deep: bool) -> list[tuple]:
    """The findings of the training program on ``device``: (code, row, related rows)."""
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(SYNC_FREE_TRAINING).format(device=device))
    try:
        with aliaslint.trace(deep=deep) as tracer:
            runpy.run_path(str(path), run_name="__main__")
    finally:
        if device == "cuda":
            torch.cuda.set_sync_debug_mode("default")
    return [(d.code, d.location.row, tuple((r.message, r.location.row) for r in d.related))
            for d in tracer.findings]


@pytest.mark.parametrize("deep", [False, True])
def test_training_steps_on_the_cpu_give_the_clipping_finding(tmp_path, deep):
    """The CPU run of the program the CUDA test below runs: its findings."""
    assert traced_training(tmp_path, "cpu", deep) == [
        ("AL103", 15, (("saved for backward here", 13), ("backward runs here", 17)))]


@cuda
@pytest.mark.cuda
@pytest.mark.parametrize("deep", [False, True])
def test_tracer_adds_no_device_synchronisation(tmp_path, deep):
    """Training steps on CUDA under `set_sync_debug_mode("error")`: the tracer's work at each
    op (storages, versions, layouts, the saved-tensor hooks) reads no device memory, so the
    run completes, and the deliberate hazard is still reported.  Backward runs the CUDA
    nodes in autograd's device thread, where no user line is on the stack: the backward's
    line may be missing from the related locations."""
    found = traced_training(tmp_path, "cuda", deep)
    assert [(code, row) for code, row, _ in found] == [("AL103", 15)]
    assert found[0][2] in ((("saved for backward here", 13), ("backward runs here", 17)),
                           (("saved for backward here", 13),))
