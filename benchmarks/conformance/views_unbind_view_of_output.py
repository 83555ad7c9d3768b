# source: pytorch/pytorch test/test_autograd.py TestAutogradDeviceType.test_inplace_on_view_of_multiple_output_view
# expect: AL106 at line 9
# torch: raises RuntimeError "returns multiple views"
import torch

signal = torch.rand(10, requires_grad=True).clone()
first, *rest = signal.unbind(0)
alias = first.view_as(first)
alias.mul_(2)
