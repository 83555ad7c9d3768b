"""AL207 snapshot-by-reference: its positive and negative cases (format: tests/test_rules.py)."""


# case: state dict and parameter list
import torch
from torch import nn
model = nn.Linear(2, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
best = model.state_dict()  # error: AL207
old = list(model.parameters())  # error: AL207
opt.step()
model.load_state_dict(best)
print(old)


# case: plain alias
import torch
w = torch.rand(3)
prev = w  # error: AL207
w.add_(0.1)
print((w - prev).abs().max())


# case: real copies
import copy
import torch
from torch import nn
model = nn.Linear(2, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
best = copy.deepcopy(model.state_dict())
clones = {k: v.clone() for k, v in model.state_dict().items()}
opt.step()
model.load_state_dict(best)
w = torch.rand(3)
prev = w.clone()
w.add_(0.1)
print(prev, clones)
