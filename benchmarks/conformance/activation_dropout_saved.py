# source: user report pattern: in-place dropout on a tensor tanh saved
# expect: AL105 at line 9
# torch: raises RuntimeError "modified by an inplace operation"
import torch
import torch.nn.functional as F

w = torch.randn(4, 4, requires_grad=True)
h = torch.tanh(torch.randn(3, 4) @ w)
F.dropout(h, 0.5, training=True, inplace=True)
h.sum().backward()
