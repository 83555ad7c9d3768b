# source: https://github.com/pytorch/pytorch/pull/74414 (a forward hook replaces the output by returning a new value, not by editing it)
# expect: AL101 at line 9
# torch: raises RuntimeError "modified by an inplace operation"
import torch
from torch import nn


def damp(module, inputs, output):
    output.mul_(0.5)


torch.manual_seed(0)
block = nn.Sequential(nn.Linear(4, 4), nn.Tanh())
block[1].register_forward_hook(damp)
block(torch.randn(3, 4)).sum().backward()
