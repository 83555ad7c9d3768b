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


# case: augmented assignment through a gathered copy
# runs: raises AssertionError
import torch
scores = torch.zeros(6, 4)
finished = torch.tensor([1, 4])
scores[finished][:, 0] += 10.0  # error: AL204
assert scores[finished, 0].eq(10.0).all()  # the bonus went into a dropped copy


# case: augmented assignment on the source or a kept copy
# runs: ok
import torch
scores = torch.zeros(6, 4)
finished = torch.tensor([1, 4])
scores[finished] += 1.0
scores[finished, 0] += 10.0
scores[2:4][:, 0] += 1.0
picked = scores[finished]
picked[:, 0] += 1.0
assert scores[finished, 0].eq(11.0).all() and picked[:, 0].eq(12.0).all()
