# source: pytorch/pytorch test/test_autograd.py TestAutogradDeviceType.test_non_differentiable_ops
# expect: none
# torch: ok
import torch

x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
members = torch.isin(x, torch.tensor([2.0, 3.0]))
signs = torch.signbit(x)
members.logical_not_()
signs.logical_not_()
(x * 2).sum().backward()
