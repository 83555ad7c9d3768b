# source: user report fix: initialise weights under no_grad
# expect: none
# torch: ok
import torch
from torch import nn

head = nn.Linear(16, 8)
with torch.no_grad():
    head.weight.normal_(0.0, 0.02)
    head.bias.zero_()
nn.init.zeros_(head.bias)
