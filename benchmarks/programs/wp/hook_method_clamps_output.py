# source: https://github.com/pytorch/pytorch/blob/d4cc86dc3cf9b2b5f59d1b24af4c5e430f96ab7b/torch/nn/modules/module.py @ d4cc86dc3cf9b2b5f59d1b24af4c5e430f96ab7b
# expect: AL101 at line 17
# torch: raises RuntimeError "modified by an inplace operation"
import torch
from torch import nn


class ActivationLimiter:
    """Keeps activations of the watched layers in a range and records their peaks."""

    def __init__(self, limit):
        self.limit = limit
        self.peaks = {}

    def __call__(self, module, inputs, output):
        self.peaks[id(module)] = output.detach().abs().max().item()
        output.clamp_(-self.limit, self.limit)


def attach(model, limiter):
    for layer in model.modules():
        if isinstance(layer, nn.Tanh):
            layer.register_forward_hook(limiter)


def build():
    return nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 2))


torch.manual_seed(0)
model = build()
attach(model, ActivationLimiter(0.5))
model(torch.randn(4, 6)).sum().backward()
