# source: https://github.com/facebookresearch/detectron2/blob/d0d538a439f5fbbd2eb9407e5f08fc15a7fe9af9/detectron2/layers/batch_norm.py @ d0d538a439f5fbbd2eb9407e5f08fc15a7fe9af9
# expect: none
# torch: ok
import torch
from torch import nn


class ScaledNorm(nn.Module):
    """A frozen affine normalisation whose scale tracks the batch's spread."""

    def __init__(self, channels, momentum=0.1):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("scale", torch.ones(channels))
        self.bias = nn.Parameter(torch.zeros(channels))

    def _track(self, x):
        spread = x.detach().std(dim=0)
        self.scale.mul_(1 - self.momentum).add_(self.momentum / (spread + 1e-5))

    def forward(self, x):
        out = x * self.scale.clone() + self.bias
        if self.training:
            self._track(x)
        return out


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)
        self.norm = ScaledNorm(4)

    def forward(self, x):
        return self.norm(self.fc(x))


torch.manual_seed(0)
head = Head()
head(torch.randn(5, 6)).pow(2).sum().backward()
