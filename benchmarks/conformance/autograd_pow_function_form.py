# source: user report pattern: torch.pow on a tensor written afterwards
# expect: AL101 at line 9
# torch: raises RuntimeError "modified by an inplace operation"
import torch

w = torch.randn(4, requires_grad=True)
h = w * 2.0
energy = torch.pow(h, 2).sum()
h.add_(1.0)
energy.backward()
