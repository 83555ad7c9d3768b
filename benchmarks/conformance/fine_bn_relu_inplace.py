# source: pytorch/pytorch test/test_nn.py (in-place activations after a layer whose output nothing else reads, as in torchvision's ResNet)
# expect: none
# torch: ok
import torch
from torch import nn


class ConvBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.relu(self.bn(self.conv(x)))


torch.manual_seed(0)
ConvBlock(4)(torch.randn(2, 4, 6, 6)).sum().backward()
