# source: user report pattern: torch.max(h, 1) keeps only the indices
# expect: none
# torch: ok
import torch

w = torch.randn(4, 4, requires_grad=True)
h = w * 2.0
values, indices = torch.max(h, 1)
h.add_(1.0)
values.sum().backward()
