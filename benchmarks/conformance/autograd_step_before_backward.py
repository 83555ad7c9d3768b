# source: user report pattern: optimizer.step() between forward and backward
# expect: AL101 at line 12
# torch: raises RuntimeError "modified by an inplace operation"
import torch
from torch import nn

model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1)).to("cpu")
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
loader = [(torch.randn(6, 4), torch.randn(6, 1)) for _ in range(3)]
for x, y in loader:
    loss = ((model(x) - y) ** 2).mean()
    opt.step()
    loss.backward()
