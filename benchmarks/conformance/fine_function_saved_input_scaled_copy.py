# source: https://github.com/sniklaus/softmax-splatting/issues/50 (the fix: leave what the Function saved alone), here the skip branch scaled out of place
# expect: none
# torch: ok
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
        h = h * self.skip_scale
        return out + h


torch.manual_seed(0)
block = Block(6)
block(torch.randn(4, 6)).sum().backward()
