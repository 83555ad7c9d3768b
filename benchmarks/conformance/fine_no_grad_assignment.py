# source: pytorch/pytorch test/test_autograd.py TestAutograd.test_no_grad_assignment
# expect: none
# torch: ok
import torch

x = torch.randn(5, 5, requires_grad=True)
y = torch.randn(5)
with torch.no_grad():
    x[0] = y
