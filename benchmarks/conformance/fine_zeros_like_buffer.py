# source: pytorch/pytorch test/test_autograd.py (zeros_like has no differentiable input)
# expect: none
# torch: ok
import torch

w = torch.randn(3, requires_grad=True)
buf = torch.zeros_like(w)
z = torch.sin(buf)
buf.add_(1.0)
(z * w).sum().backward()
