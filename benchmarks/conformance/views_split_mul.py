# source: pytorch/pytorch test/test_autograd.py TestAutogradDeviceType.test_inplace_on_view_multi_output_safe
# expect: AL106 at line 9
# torch: raises RuntimeError "returns multiple views"
import torch

a = torch.randn(3, 3, requires_grad=True)
b = a + a
s1, s2, s3 = b.split(1)
s1.mul_(s2)
