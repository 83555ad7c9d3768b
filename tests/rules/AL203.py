"""AL203 overlapping-write: its positive and negative cases (format: tests/test_rules.py)."""


# case: expand shift transpose
# runs: raises RuntimeError
import torch
pos = torch.arange(6).expand(2, -1)
pos.add_(1)  # error: AL203
x = torch.rand(10)
x[1:] = x[:-1]  # error: AL203
a = torch.rand(3, 3)
a.copy_(a.t())  # error: AL203


# case: attribute of plain class
import torch
class History:
    def __init__(self, n: int):
        self.frames = torch.zeros(n)
    def push(self, x: float):
        self.frames[1:] = self.frames[:-1]  # error: AL203


# case: disjoint and cloned
# runs: ok
import torch
x = torch.rand(10)
x[2:] = x[:2].sum()
x[:5] = x[5:]
x.add_(x)
m = torch.rand(4, 6)
m[:, :3] = m[:, 3:]
pos = torch.arange(6).expand(2, -1).clone()
pos.add_(1)
