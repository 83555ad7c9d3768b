# source: pytorch/pytorch test/test_autograd.py TestAutogradDeviceType.test_inplace_on_view_backprop_view
# expect: none
# torch: ok
import torch

a = torch.tensor([2.0, 5.0])
b = torch.tensor([3.0], requires_grad=True)
res = a.narrow(0, 1, 1).mul_(b)
res.sum().backward()
