# source: pytorch/pytorch test/test_autograd.py TestAutograd.test_return_duplicate_inplace (an in-place Function that says so with ctx.mark_dirty)
# expect: none
# torch: ok
import torch


class Double_(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2.0)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * 2.0


torch.manual_seed(0)
fc = torch.nn.Linear(4, 4)
inp = torch.randn(3, 4)
h = fc(inp)
out = Double_.apply(h) + h  # `h` is now the Function's output, doubled
out.sum().backward()
assert torch.allclose(fc.bias.grad, torch.full((4,), 12.0))
