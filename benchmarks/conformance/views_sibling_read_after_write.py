# source: pytorch/pytorch test/test_autograd.py (outputs of a multi-output view after a sibling was modified in place)
# expect: AL106 at line 9
# torch: raises RuntimeError "its base or another view of its base has been modified inplace"
import torch

z = torch.randn(4, 3, requires_grad=True) * 1.0
head, tail = z.chunk(2)
with torch.no_grad():
    head.zero_()
total = tail.sum()
