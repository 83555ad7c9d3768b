"""AL103 data-bypasses-autograd: its positive and negative cases (format: tests/test_rules.py)."""


# case: data write between forward and backward
import torch
w = torch.randn(3, requires_grad=True)
y = w * w
w.data.clamp_(-1, 1)  # error: AL103
y.sum().backward()


# case: weight not saved when input needs no grad
# runs: ok
import torch
w = torch.randn(3, 3, requires_grad=True)
data = torch.randn(2, 3)
out = data @ w
w.data.clamp_(-1, 1)
out.sum().backward()
