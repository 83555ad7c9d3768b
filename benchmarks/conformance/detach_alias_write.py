# source: user report pattern: writing a .detach() alias of a tensor autograd saved
# expect: AL104 at line 9
# torch: raises RuntimeError "modified by an inplace operation"
import torch

w = torch.randn(4, requires_grad=True)
h = torch.tanh(w)
frozen = h.detach()
frozen.zero_()
h.sum().backward()
