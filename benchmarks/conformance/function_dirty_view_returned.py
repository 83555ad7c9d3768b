# source: pytorch/pytorch test/test_autograd.py TestAutograd.test_return_duplicate_inplace (an in-place Function with ctx.mark_dirty, here returning a view of the input instead of the input)
# expect: AL106 at line 23
# torch: raises RuntimeError "marked as dirty during the forward method were not returned as output"
import torch
from torch import nn


class ClampHead_(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.clamp_(min=0.0)
        ctx.mark_dirty(x)
        return x[:, :4]

    @staticmethod
    def backward(ctx, grad):
        return grad


torch.manual_seed(0)
proj = nn.Linear(6, 8)
h = proj(torch.randn(3, 6))
head = ClampHead_.apply(h)
head.sum().backward()
