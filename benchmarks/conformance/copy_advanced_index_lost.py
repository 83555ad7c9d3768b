# source: https://github.com/pytorch/pytorch/issues/32579 (x[idx][:, j] = v writes into a copy)
# expect: AL204 at line 8
# torch: wrong "the write went into a copy"
import torch

scores = torch.zeros(4, 3)
rows = torch.tensor([0, 2])
scores[rows][:, 1] = 5.0
if scores.sum().item() == 0.0:
    raise SystemExit(1)
