# source: https://github.com/pytorch/pytorch/issues/34765 (take copies of the state_dict values), here an L2-SP anchor built with {k: v.clone()}
# expect: none
# torch: ok
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
anchor = {k: v.clone() for k, v in model.state_dict().items()}
x, y = torch.randn(16, 4), torch.randn(16, 2)
for _ in range(3):
    drift = sum((p - anchor[k]).pow(2).sum() for k, p in model.named_parameters())
    loss = nn.functional.mse_loss(model(x), y) + 0.01 * drift
    opt.zero_grad()
    loss.backward()
    opt.step()
final_drift = sum((p - anchor[k]).pow(2).sum() for k, p in model.named_parameters())
if final_drift.item() == 0.0:
    raise SystemExit(1)
