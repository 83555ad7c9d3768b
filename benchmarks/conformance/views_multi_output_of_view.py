# source: pytorch/pytorch test/test_autograd.py TestAutogradDeviceType.test_inplace_multiple_output_view_of_view
# expect: AL106 at line 9
# torch: raises RuntimeError "returns multiple views"
import torch

weights = torch.rand(10, requires_grad=True).clone()
flat = weights.view_as(weights)
pieces = flat.unbind(0)
pieces[0].mul_(2)
