# source: user report pattern: a key cache overwritten while an earlier step's graph still reads it
# expect: AL101 at line 12
# torch: raises RuntimeError "modified by an inplace operation"
import torch
from torch import nn

proj = nn.Linear(4, 4)
cache = torch.zeros(3, 4)
loss = 0.0
for step in range(3):
    q = proj(torch.randn(1, 4))
    cache[step] = q.detach()[0]
    loss = loss + (q @ cache.t()).sum()
loss.backward()
