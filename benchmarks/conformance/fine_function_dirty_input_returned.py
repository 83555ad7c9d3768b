# source: pytorch/pytorch test/test_autograd.py TestAutograd.test_return_duplicate_inplace (the input marked dirty is returned as it is; the caller slices it)
# expect: none
# torch: ok
import torch
from torch import nn


class Clamp_(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.clamp_(min=0.0)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (x > 0)


torch.manual_seed(0)
proj = nn.Linear(6, 8)
h = proj(torch.randn(3, 6))
head = Clamp_.apply(h)[:, :4]
head.sum().backward()
print(proj.bias.grad.shape)
