# source: pytorch/pytorch test/test_view_ops.py TestViewOps.test_t_view (an item assignment through a transpose reaches the base), here one column picked out of a grid and edited as if it were a separate vector
# expect: AL201 at line 8
# torch: wrong "the grid changed through the picked column"
import torch

grid = torch.zeros(3, 4)
col = grid.t()[1]
col[2] = 7.0
occupied = grid.count_nonzero().item()
if occupied != 0:
    raise SystemExit(1)
