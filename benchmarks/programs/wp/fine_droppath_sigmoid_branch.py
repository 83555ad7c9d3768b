# source: https://github.com/huggingface/pytorch-image-models/blob/84178fca60fca9d35c0ea5ec08af2e88bf058559/timm/layers/drop.py @ 84178fca60fca9d35c0ea5ec08af2e88bf058559
# expect: none
# torch: ok
import torch
from torch import nn


def drop_path(x, drop_prob: float = 0.0, training: bool = False):
    """Drop whole samples of a residual branch (stochastic depth)."""
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = 1 - drop_prob
    mask = x.new_empty((x.shape[0],) + (1,) * (x.ndim - 1)).bernoulli_(keep_prob)
    return x * mask / keep_prob


class Block(nn.Module):
    def __init__(self, dim, drop_prob=0.2):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.drop_prob = drop_prob

    def forward(self, x):
        branch = torch.sigmoid(self.fc(x))
        return x + drop_path(branch, self.drop_prob, self.training)


torch.manual_seed(0)
blocks = nn.Sequential(Block(8), Block(8))
blocks(torch.randn(4, 8)).sum().backward()
