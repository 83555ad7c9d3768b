# source: user report pattern: nn.ReLU(inplace=True) on a tensor the residual branch still uses
# expect: AL105 at line 7
# torch: wrong "the residual sum used the activated values"
import torch
from torch import nn

act = nn.ReLU(inplace=True)
x = torch.randn(4, 4)
expected = torch.relu(x) + x
identity = x
out = act(x) + identity
if not torch.allclose(out, expected):
    raise SystemExit(1)
