# source: user report pattern: clipping the loader batch in place after the forward pass, while nn.Linear still holds it for the weight gradient
# expect: AL101 at line 15
# torch: raises RuntimeError "modified by an inplace operation"
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
model = nn.Linear(6, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
loader = [(torch.randn(8, 6) * 3, torch.randn(8, 1)) for _ in range(2)]
for xb, yb in loader:
    opt.zero_grad()
    pred = model(xb)
    xb.clamp_(-3.0, 3.0)
    print(f"batch range {xb.min().item():.2f}..{xb.max().item():.2f}")
    loss = F.mse_loss(pred, yb)
    loss.backward()
    opt.step()
