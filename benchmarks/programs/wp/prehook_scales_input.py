# source: https://github.com/pytorch/pytorch/blob/d4cc86dc3cf9b2b5f59d1b24af4c5e430f96ab7b/torch/nn/modules/module.py @ d4cc86dc3cf9b2b5f59d1b24af4c5e430f96ab7b
# expect: AL101 at line 11
# torch: raises RuntimeError "modified by an inplace operation"
import torch
from torch import nn


def input_scaler(factor):
    def hook(module, args):
        (x,) = args
        x.mul_(factor)

    return hook


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.inner = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        h = torch.exp(self.inner(x))
        return self.out(h) + h.sum(-1, keepdim=True)


def build(dim=6):
    block = Block(dim)
    block.out.register_forward_pre_hook(input_scaler(0.1))
    return block


torch.manual_seed(0)
model = build()
model(torch.randn(3, 6)).sum().backward()
