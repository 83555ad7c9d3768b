# source: pytorch/pytorch test/test_view_ops.py TestOldViewOps.test_reshape (a strided slice stays viewable when its rows stay evenly spaced)
# expect: none
# torch: ok
import torch

frames = torch.randn(4, 6)
even = frames[:, ::2]
flat = even.view(-1)
assert flat.stride() == (2,)
