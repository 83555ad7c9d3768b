# source: user report pattern: dividing an RMSE loss in place for gradient accumulation
# expect: AL101 at line 12
# torch: raises RuntimeError "modified by an inplace operation"
import torch
import torch.nn.functional as F
from torch import nn

model = nn.Linear(4, 1)
accum_steps = 4
for xb, yb in [(torch.randn(8, 4), torch.randn(8, 1))]:
    loss = torch.sqrt(F.mse_loss(model(xb), yb))
    loss /= accum_steps
    loss.backward()
