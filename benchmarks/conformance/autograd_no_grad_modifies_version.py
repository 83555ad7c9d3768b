# source: pytorch/pytorch test/test_autograd.py TestAutograd.test_no_grad_modifies_version
# expect: AL101 at line 10
# torch: raises RuntimeError "modified by an inplace operation"
import torch

x = torch.randn(5, requires_grad=True)
y = torch.randn(5, requires_grad=True)
z = (x * y).sum()
with torch.no_grad():
    x *= 2
z.backward()
