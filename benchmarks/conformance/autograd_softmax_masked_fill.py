# source: user report pattern: masking attention weights in place after softmax
# expect: AL101 at line 12
# torch: raises RuntimeError "modified by an inplace operation"
import torch
from torch import nn

proj = nn.Linear(8, 8)
x = torch.randn(2, 5, 8)
scores = proj(x) @ x.transpose(1, 2)
attn = scores.softmax(dim=-1)
mask = torch.rand(2, 5, 5) > 0.8
attn.masked_fill_(mask, 0.0)
(attn @ x).sum().backward()
