# source: pytorch/pytorch test/test_autograd.py TestAutograd.test_return_duplicate_inplace (an in-place Function with ctx.mark_dirty, applied to a tensor an earlier op saved)
# expect: AL101 at line 11
# torch: raises RuntimeError "modified by an inplace operation"
import torch
from torch import nn


class Scale_(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(0.5)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * 0.5


torch.manual_seed(0)
proj = nn.Linear(6, 8)
gate = torch.sigmoid(proj(torch.randn(3, 6)))  # sigmoid saves its output
damped = Scale_.apply(gate)
damped.sum().backward()
