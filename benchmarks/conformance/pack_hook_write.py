# source: pytorch/pytorch test/test_autograd.py TestAutogradGraph saved_tensors_hooks (a pack hook that modifies its input)
# expect: AL106 at line 8
# torch: raises RuntimeError "A saved tensor pack hook is modifying its input in place"
import torch


def pack(t):
    t.mul_(2.0)
    return t


x = torch.randn(3, requires_grad=True) * 1.0
with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
    y = x.exp()
