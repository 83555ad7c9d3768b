"""AL204 write-to-copy-lost: its positive and negative cases (format: tests/test_rules.py)."""


# case: lost copies
import torch
x = torch.rand(5, 3)
idx = torch.tensor([0, 2])
mask = x > 0.5
x[idx][mask[idx]] = 0.0  # error: AL204
x[[0, 1]].zero_()  # error: AL204
x.index_select(0, idx).fill_(1.0)  # error: AL204
x[mask].add_(1)  # error: AL204


# case: direct writes and kept copies
import torch
x = torch.rand(5, 3)
idx = torch.tensor([0, 2])
x[idx] = 0.0
x[1:3].zero_()
x.index_fill_(0, idx, 0.0)
y = x[idx]
y.add_(1)
counts = torch.ones_like(x)
counts.cumsum_(1).remainder_(2)
