# source: user report pattern: gated unit scaling a chunk in place ('Output 0 of SplitBackward0 is a view and is being modified inplace')
# expect: AL106 at line 15
# torch: raises RuntimeError "returns multiple views"
import torch
from torch import nn


class GatedLinearUnit(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, 2 * dim)

    def forward(self, x):
        value, gate = self.proj(x).chunk(2, dim=-1)
        gate.sigmoid_()
        return value * gate


unit = GatedLinearUnit(8)
unit(torch.randn(4, 8)).sum().backward()
