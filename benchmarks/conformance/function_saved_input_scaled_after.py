# source: https://github.com/sniklaus/softmax-splatting/issues/50 (an input a custom Function kept with ctx.save_for_backward is changed in place afterwards: "modified by an inplace operation" at backward, fixed there by saving clones)
# expect: AL101 at line 30
# torch: raises RuntimeError "modified by an inplace operation"
import torch
from torch import nn


class SquaredReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0).pow(2)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 2 * x.clamp(min=0)


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.skip_scale = dim ** -0.5

    def forward(self, x):
        h = self.fc(x)
        out = SquaredReLU.apply(h)
        # Scale the skip branch; `h` is what SquaredReLU saved.
        h.mul_(self.skip_scale)
        return out + h


torch.manual_seed(0)
block = Block(6)
block(torch.randn(4, 6)).sum().backward()
