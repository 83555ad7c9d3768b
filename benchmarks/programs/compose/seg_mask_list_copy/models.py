import torch
from torch import nn


class MultiScaleSeg(nn.Module):
    """Mask logits at several scales; returns the sigmoid probabilities."""

    def __init__(self, channels=8, scales=(1, 2)):
        super().__init__()
        self.body = nn.Conv2d(3, channels, 3, padding=1)
        self.heads = nn.ModuleList(nn.Conv2d(channels, 1, 1) for _ in scales)
        self.scales = scales

    def forward(self, x):
        f = self.body(x)
        return [torch.sigmoid(h(nn.functional.avg_pool2d(f, s))) for h, s in zip(self.heads, self.scales)]
