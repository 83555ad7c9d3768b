# source: user report fix: copy.deepcopy(model.state_dict())
# expect: none
# torch: ok
import copy
import torch
from torch import nn

model = nn.Linear(2, 1)
best = copy.deepcopy(model.state_dict())
with torch.no_grad():
    model.weight.add_(1.0)
