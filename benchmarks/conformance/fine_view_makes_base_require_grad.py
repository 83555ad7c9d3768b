# source: pytorch/pytorch test/test_autograd.py TestAutogradDeviceType.test_inplace_on_view_makes_base_require_grad
# expect: none
# torch: ok
import torch

root = torch.randn(4, 4)
b = torch.randn(4, 2, requires_grad=True)
x = root.clone()
x.narrow(1, 2, 2).mul_(b)
x.sum().backward()
