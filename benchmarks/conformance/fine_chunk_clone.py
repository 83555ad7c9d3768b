# source: user report fix: clone the chunk before writing it
# expect: none
# torch: ok
import torch
from torch import nn

proj = nn.Linear(8, 24)
q, k, v = proj(torch.randn(2, 4, 8)).chunk(3, dim=-1)
q = q.clone()
q.mul_(8 ** -0.5)
((q @ k.transpose(-2, -1)).softmax(-1) @ v).sum().backward()
