# source: user report pattern: adding an L2 penalty to the loss with += (mse_loss does not keep its result for backward)
# expect: none
# torch: ok
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
loss = F.mse_loss(model(torch.randn(4, 3)), torch.zeros(4, 1))
loss += 0.01 * sum(p.pow(2).sum() for p in model.parameters())
loss.backward()
