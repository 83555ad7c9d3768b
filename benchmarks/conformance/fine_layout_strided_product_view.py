# source: pytorch/pytorch test/test_view_ops.py TestOldViewOps.test_reshape (a strided slice is not viewable as one dimension, but the result of an arithmetic operation on it is a new contiguous tensor)
# expect: none
# torch: ok
import torch

torch.manual_seed(0)
x = torch.rand(4, 6)
even = x[:, ::2] * 2.0
flat = even.view(-1)
if flat.shape != (12,) or not torch.equal(flat[:3], x[0, ::2] * 2.0):
    raise SystemExit(1)
