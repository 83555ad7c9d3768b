# source: https://github.com/pytorch/pytorch/issues/9391 (an indexed assignment into a sigmoid output)
# expect: AL101 at line 11
# torch: raises RuntimeError "modified by an inplace operation"
import torch
from torch import nn

torch.manual_seed(0)
head = nn.Linear(4, 3)
probs = torch.sigmoid(head(torch.randn(2, 4)))
# Pin the background column to a fixed confidence.
probs[:, 0] = 0.5
probs.sum().backward()
