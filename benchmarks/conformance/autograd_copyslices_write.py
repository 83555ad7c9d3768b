# source: pytorch/pytorch test/test_autograd.py TestAutograd.test_leaf_assignment (a write that makes the buffer require grad)
# expect: AL101 at line 8
# torch: raises RuntimeError "modified by an inplace operation"
import torch

gain = torch.tensor(0.5, requires_grad=True)
state = torch.zeros(5, 2)
state[1] = state[0] * gain
state.pow(2).sum().backward()
