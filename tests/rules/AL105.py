"""AL105 inplace-activation-clobbers-input: its positive and negative cases (format: tests/test_rules.py)."""


# case: functional inplace activation
# runs: raises RuntimeError
import torch
import torch.nn.functional as F
w = torch.randn(3, requires_grad=True)
s = torch.sigmoid(w)
F.relu(s, inplace=True)  # error: AL105
s.sum().backward()


# case: inplace module clobbers skip
import torch
from torch import nn
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU(inplace=True)  # error: AL105
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        skip = x
        h = self.act(x)
        return self.fc(h) + skip


# case: inplace on fresh tensors
import torch
from torch import nn
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU(inplace=True)
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        x = self.act(self.fc(x))
        return x + 1
