# source: user report pattern: scatter-adding into a tensor exp saved
# expect: AL101 at line 9
# torch: raises RuntimeError "modified by an inplace operation"
import torch

w = torch.randn(5, 3, requires_grad=True)
h = w.exp()
src = torch.ones(2, 3)
h.index_add_(0, torch.tensor([0, 2]), src)
h.sum().backward()
