"""AL202 view-of-noncontiguous: its positive and negative cases (format: tests/test_rules.py)."""


# case: merge after transpose
# runs: raises RuntimeError
import torch
x = torch.rand(2, 3, 4)
y = x.transpose(1, 2)
z = y.view(2, -1)  # error: AL202
# The view above raises for certain: nothing after it on this path runs, or is reported.
w = x.permute(0, 2, 1).view(2, -1)
z.add_(1)


# case: merge after permute
# runs: raises RuntimeError
import torch
x = torch.rand(2, 3, 4)
w = x.permute(0, 2, 1).view(2, -1)  # error: AL202


# case: split contiguous reshape dtype and mergeable
# runs: ok
import torch
x = torch.rand(2, 5, 4)
a = x.transpose(1, 2).view(2, 4, 5)
b = x.transpose(1, 2).contiguous().view(2, -1)
c = x.transpose(1, 2).reshape(2, -1)
d = x.transpose(1, 2).view(torch.int32)
e = x.permute(0, 2, 1).view(2, 2, 2, 5)
img = torch.rand(2, 3, 4, 4)
patches = img.permute(0, 2, 3, 1).view(2, 4 * 4, 3)
