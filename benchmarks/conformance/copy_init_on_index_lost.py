# source: https://github.com/pytorch/pytorch/issues/2497 (an initialiser applied to an advanced-index copy)
# expect: AL204 at line 11
# torch: wrong "the new embedding rows kept their old values"
import torch
from torch import nn

torch.manual_seed(0)
table = nn.Embedding(6, 3)
new_rows = torch.tensor([4, 5])
with torch.no_grad():
    nn.init.zeros_(table.weight[new_rows])
if table.weight[new_rows].abs().sum().item() != 0.0:
    raise SystemExit(1)
