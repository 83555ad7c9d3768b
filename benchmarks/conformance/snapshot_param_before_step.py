# source: user report pattern: the "previous" weight kept to measure the update is the parameter itself, so the update comes out as zero
# expect: AL207 at line 12
# torch: wrong "the measured update size is zero"
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(16, 4), torch.randn(16, 1)
previous = model.weight
F.mse_loss(model(x), y).backward()
opt.step()
update = (model.weight - previous).norm().item()
if update == 0.0:
    raise SystemExit(1)
