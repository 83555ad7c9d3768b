# source: pytorch/pytorch test/test_autograd.py TestAutograd.test_return_duplicate_inplace (the in-place Function there, without its ctx.mark_dirty)
# expect: AL208 at line 10
# torch: wrong "the residual branch's gradient uses the input's old history"
import torch


class Double_(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2.0)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * 2.0


torch.manual_seed(0)
fc = torch.nn.Linear(4, 4)
inp = torch.randn(3, 4)
h = fc(inp)
out = Double_.apply(h) + h  # the residual reads `h`, which forward doubled
out.sum().backward()
# Out of place, the same values: 2h + 2h, so d/dbias = 4 per row.
if not torch.allclose(fc.bias.grad, torch.full((4,), 12.0)):
    raise SystemExit(1)
