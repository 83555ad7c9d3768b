# source: https://github.com/huangleiBuaa/IterNorm-pytorch/issues/2 (a running buffer registered as an expand()ed identity)
# expect: AL203 at line 17
# torch: raises RuntimeError "more than one element of the written-to tensor refers to a single memory location"
import torch
from torch import nn


class Whitening(nn.Module):
    def __init__(self, groups, channels, momentum=0.1):
        super().__init__()
        self.momentum = momentum
        eye = torch.eye(channels).expand(groups, channels, channels)
        self.register_buffer("running_wm", eye)

    def forward(self, x):
        cov = torch.einsum("gnc,gnd->gcd", x, x) / x.shape[1]
        self.running_wm.mul_(1 - self.momentum)
        self.running_wm.add_(self.momentum * cov)
        return x


Whitening(2, 3)(torch.randn(2, 10, 3))
