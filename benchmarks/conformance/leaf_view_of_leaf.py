# source: pytorch/pytorch test/test_autograd.py (view of a leaf written in place)
# expect: AL102 at line 7
# torch: raises RuntimeError "a view of a leaf Variable that requires grad"
import torch

w = torch.randn(4, 3, requires_grad=True)
w[:, 1] += 1.0
