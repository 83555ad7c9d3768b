# source: https://github.com/pytorch/examples/pull/779 (the fix: update through .data once backward is done)
# expect: none
# torch: ok
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
model = nn.Linear(4, 2)
lr = 0.5
loss = F.cross_entropy(model(torch.randn(8, 4)), torch.randint(0, 2, (8,)))
loss.backward()
for p in model.parameters():
    p.data.add_(p.grad, alpha=-lr)
