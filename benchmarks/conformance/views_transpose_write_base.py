# source: pytorch/pytorch test/test_view_ops.py TestViewOps.test_transpose_view (a write through the view changes the base)
# expect: AL201 at line 8
# torch: wrong "the base changed through the transpose"
import torch

grid = torch.zeros(3, 3)
column_major = grid.t()
column_major.add_(1.0)
if grid.sum().item() != 0.0:
    raise SystemExit(1)
