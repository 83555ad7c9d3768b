# source: https://github.com/fungtion/DANN_py3/issues/2 (a gradient reversal Function that returns its input as-is, here followed by an in-place op)
# expect: AL106 at line 24
# torch: raises RuntimeError "created inside a custom Function"
import torch
from torch import nn


class ReverseGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x

    @staticmethod
    def backward(ctx, grad):
        return -ctx.alpha * grad, None


torch.manual_seed(0)
features = nn.Linear(6, 8)
domain_head = nn.Linear(8, 2)
h = features(torch.randn(4, 6))
r = ReverseGrad.apply(h, 0.1)
r.relu_()
domain_head(r).sum().backward()
