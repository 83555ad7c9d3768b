# source: user report fix: step after every backward
# expect: none
# torch: ok
import torch
from torch import nn

model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in [(torch.randn(6, 4), torch.randn(6, 1)) for _ in range(3)]:
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
