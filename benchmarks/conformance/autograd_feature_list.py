# source: user report pattern: scaling one of the collected feature maps in place
# expect: AL101 at line 13
# torch: raises RuntimeError "modified by an inplace operation"
import torch
from torch import nn

blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
x = torch.randn(2, 4)
feats = []
for block in blocks:
    x = torch.tanh(block(x))
    feats.append(x)
feats[0].mul_(2.0)
sum(f.sum() for f in feats).backward()
