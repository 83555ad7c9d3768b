# source: pytorch/pytorch test/test_autograd.py TestAutogradDeviceType.test_inplace_on_view_multi_output_unsafe
# expect: none
# torch: ok
import torch

a = torch.randn(3, 3, requires_grad=True)
b = a + a
s1, s2, s3 = b.unsafe_split(1)
s1.mul_(s2)
s1.sum().backward()
