# source: user report pattern: an in-place ReLU on trunk features that an auxiliary head has already consumed
# expect: AL105 at line 13
# torch: raises RuntimeError "modified by an inplace operation"
import torch
from torch import nn


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(6, 8)
        self.aux = nn.Linear(8, 2)
        self.act = nn.ReLU(inplace=True)
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        feats = self.trunk(x)
        aux = self.aux(feats)
        out = self.head(self.act(feats))
        return out, aux


torch.manual_seed(0)
out, aux = TwoHeads()(torch.randn(4, 6))
(out.sum() + aux.sum()).backward()
