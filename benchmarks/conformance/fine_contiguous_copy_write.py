# source: pytorch/pytorch test/test_view_ops.py TestViewOps.test_contiguous_nonview (contiguous() of a transpose is a copy)
# expect: none
# torch: ok
import torch

grid = torch.ones(3, 3)
packed = grid.t().contiguous()
packed[0, 0] = 0.0
assert grid[0, 0].item() == 1.0
