# source: user report pattern: a hand-written SGD step through p.detach(), after backward and before the next forward
# expect: none
# torch: ok
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
x, y = torch.randn(16, 3), torch.randn(16, 1)
lr = 0.1
start = nn.functional.mse_loss(model(x), y).item()
for _ in range(5):
    loss = nn.functional.mse_loss(model(x), y)
    model.zero_grad()
    loss.backward()
    for p in model.parameters():
        p.detach().add_(-lr * p.grad)
if nn.functional.mse_loss(model(x), y).item() >= start:
    raise SystemExit(1)
