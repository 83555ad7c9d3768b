# source: pytorch/pytorch test/test_autograd.py TestAutograd.test_return_duplicate_inplace (the in-place Function applied to a clone, as the test does)
# expect: none
# torch: ok
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
gate = torch.sigmoid(proj(torch.randn(3, 6)))
damped = Scale_.apply(gate.clone())
damped.sum().backward()
print(proj.bias.grad.shape)
