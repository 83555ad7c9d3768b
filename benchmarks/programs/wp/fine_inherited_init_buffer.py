# source: https://github.com/facebookresearch/detectron2/blob/d0d538a439f5fbbd2eb9407e5f08fc15a7fe9af9/detectron2/layers/batch_norm.py @ d0d538a439f5fbbd2eb9407e5f08fc15a7fe9af9
# expect: none
# torch: ok
import torch
from torch import nn


class FrozenAffine(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.register_buffer("weight", torch.ones(channels))
        self.register_buffer("bias", torch.zeros(channels))

    def forward(self, x):
        return x * self.weight[:, None, None] + self.bias[:, None, None]


class AdaptiveAffine(FrozenAffine):
    """Same buffers; after each training batch it folds the batch's scale into them."""

    def forward(self, x):
        if self.training:
            self.fold(x.detach())
        return super().forward(x)

    def fold(self, x):
        self.weight.mul_(0.9).add_(0.1 * x.abs().mean(dim=(0, 2, 3)))


torch.manual_seed(0)
net = nn.Sequential(nn.Conv2d(3, 4, 3), AdaptiveAffine(4))
net(torch.randn(2, 3, 6, 6)).sum().backward()
