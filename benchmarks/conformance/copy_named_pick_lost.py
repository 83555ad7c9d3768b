# source: pytorch/pytorch test/test_view_ops.py TestViewOps.test_advanced_indexing_nonview (advanced indexing returns a copy)
# expect: AL204 at line 10
# torch: wrong "the chosen cells of the board did not change"
import torch

board = torch.ones(3, 3)
rows = torch.tensor([0, 2])
cols = torch.tensor([1, 2])
chosen = board[rows, cols]
chosen.zero_()
if board.sum().item() == 9.0:
    raise SystemExit(1)
