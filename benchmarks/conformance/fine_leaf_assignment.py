# source: pytorch/pytorch test/test_autograd.py TestAutograd.test_leaf_assignment
# expect: none
# torch: ok
import torch

x = torch.randn(5, 5)
y = torch.randn(5, requires_grad=True)
z = torch.randn(5, requires_grad=True)
x[0] = y
x[1] = 2 * z
x.sum().backward()
