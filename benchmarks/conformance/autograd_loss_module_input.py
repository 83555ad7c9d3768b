# source: user report pattern: clamping predictions in place after the criterion saw them
# expect: AL101 at line 12
# torch: raises RuntimeError "modified by an inplace operation"
import torch
from torch import nn

model = nn.Linear(4, 1)
criterion = nn.MSELoss()
x, y = torch.randn(8, 4), torch.randn(8, 1)
pred = model(x)
loss = criterion(pred, y)
pred.clamp_(-1.0, 1.0)
loss.backward()
