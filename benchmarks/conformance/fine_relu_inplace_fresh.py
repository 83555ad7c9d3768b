# source: user report fix: in-place activation on a fresh tensor
# expect: none
# torch: ok
import torch
from torch import nn

net = nn.Sequential(nn.Linear(4, 4), nn.ReLU(inplace=True), nn.Linear(4, 1))
net(torch.randn(3, 4)).sum().backward()
