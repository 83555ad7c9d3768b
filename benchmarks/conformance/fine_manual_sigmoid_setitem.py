# source: https://github.com/pytorch/pytorch/issues/9391 (the hand-written sigmoid: its last op, a multiplication by a constant, saves nothing the write touches)
# expect: none
# torch: ok
import torch

a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = 1 / ((-a).exp() + 1)
b[1] = 2.0
b.sum().backward()
assert a.grad[1].item() == 0.0
