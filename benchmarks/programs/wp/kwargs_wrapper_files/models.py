import torch
from torch import nn


class MaskedCorruption(nn.Module):
    def forward(self, x, fraction=0.25):
        mask = torch.rand_like(x) < fraction
        x.masked_fill_(mask, 0.0)
        return x


class Denoiser(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, 16), nn.ReLU(), nn.Linear(16, dim))

    def forward(self, x):
        return self.net(x)
