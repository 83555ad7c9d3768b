# source: pytorch/pytorch test/test_autograd.py TestAutogradDeviceType.test_inplace_on_view_modify_base
# expect: none
# torch: ok
import torch

r = torch.ones(1, requires_grad=True)
x = torch.ones(5)
v = x.select(0, 1)
x.add_(r)
v.sum().backward()
