# source: pytorch/pytorch test/test_view_ops.py TestViewOps (tensor_split returns slices)
# expect: none
# torch: ok
import torch

z = torch.randn(4, 3, requires_grad=True) * 1.0
left, right = torch.tensor_split(z, 2)
right.add_(1.0)
(left * right).sum().backward()
