# source: pytorch/pytorch test/test_autograd.py (a custom Function that writes its input in place and says so with ctx.mark_dirty)
# expect: none
# torch: ok
import torch


class Double_(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.mark_dirty(x)
        return x.mul_(2.0)

    @staticmethod
    def backward(ctx, grad):
        return grad * 2.0


a = torch.randn(3, requires_grad=True)
Double_.apply(a.clone()).sum().backward()
assert torch.equal(a.grad, torch.full((3,), 2.0))
