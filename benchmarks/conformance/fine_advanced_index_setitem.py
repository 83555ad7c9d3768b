# source: pytorch/pytorch test/test_view_ops.py TestViewOps.test_advanced_indexing_assignment (an indexed assignment writes into the tensor itself)
# expect: none
# torch: ok
import torch

board = torch.ones(3, 3)
rows = torch.tensor([0, 2])
cols = torch.tensor([1, 2])
board[rows, cols] = 0.0
board[rows] += 1.0
assert board.sum().item() == 13.0
