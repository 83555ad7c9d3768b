# source: pytorch/pytorch test/test_autograd.py TestAutograd custom Function returning a view of its input
# expect: AL106 at line 19
# torch: raises RuntimeError "This view was created inside a custom Function"
import torch


class Flatten(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.view(-1)

    @staticmethod
    def backward(ctx, grad):
        return grad.view(2, 3)


x = torch.randn(2, 3, requires_grad=True) * 1.0
flat = Flatten.apply(x)
flat.mul_(2.0)
