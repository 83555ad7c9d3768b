# source: pytorch/pytorch test/test_autograd.py TestAutogradDeviceType.test_inplace_on_view_non_contig
# expect: none
# torch: ok
import torch

root = torch.ones(2, 3, 2).select(2, 1).t().requires_grad_(True)
x = root.clone()
v1 = x.narrow(0, 0, 1)
v2 = v1.narrow(1, 1, 1)
v2.mul_(2)
x.sum().backward()
