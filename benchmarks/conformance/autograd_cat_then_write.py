# source: user report pattern: writing a tensor after concatenating it
# expect: AL101 at line 9
# torch: raises RuntimeError "modified by an inplace operation"
import torch

w = torch.randn(3, requires_grad=True)
h = torch.sigmoid(w)
both = torch.cat([h, h * 2])
h.mul_(0.5)
both.sum().backward()
