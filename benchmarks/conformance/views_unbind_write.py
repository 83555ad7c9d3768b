# source: pytorch/pytorch test/test_autograd.py TestAutogradDeviceType.test_inplace_on_view_multiple_outputs
# expect: AL106 at line 8
# torch: raises RuntimeError "returns multiple views"
import torch

root = torch.arange(9.0).reshape(3, 3).requires_grad_()
rows = root.clone().unbind()
rows[0].mul_(2)
