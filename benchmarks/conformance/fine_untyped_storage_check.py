# source: pytorch/pytorch test/test_view_ops.py TestViewOps.is_view_of (sharing tested on the storages' data_ptr)
# expect: none
# torch: ok
import torch

grid = torch.zeros(2, 3)
tail = grid[1]
assert grid.untyped_storage().data_ptr() == tail.untyped_storage().data_ptr()
