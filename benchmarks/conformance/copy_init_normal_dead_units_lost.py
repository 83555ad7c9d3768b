# source: https://github.com/pytorch/pytorch/issues/2497 (an initialiser applied to an advanced-index copy), here re-initialising dead units selected by a bool mask
# expect: AL204 at line 12
# torch: wrong "the dead units are still all zero"
import torch
from torch import nn

torch.manual_seed(0)
layer = nn.Linear(4, 6)
with torch.no_grad():
    layer.weight[2:4] = 0.0
    dead = layer.weight.abs().sum(dim=1) == 0
    nn.init.normal_(layer.weight[dead], std=0.1)
if layer.weight[dead].abs().sum().item() == 0.0:
    raise SystemExit(1)
