"""AL104 detached-alias-write: its positive and negative cases (format: tests/test_rules.py)."""


# case: detach alias write
# runs: raises RuntimeError
import torch
w = torch.randn(3, requires_grad=True)
e = w.exp()
e.detach().mul_(0)  # error: AL104
e.sum().backward()


# case: detached copy written or alias written after backward
# runs: ok
import torch
w = torch.randn(3, requires_grad=True)
e = w.exp()
codes = e.detach().clone()
codes.mul_(0)
e.sum().backward()
e.detach().mul_(0)
