# source: https://github.com/pytorch/tutorials/pull/188 (the fix: copy.deepcopy(model.state_dict())), inside a train(model, ...) function
# expect: none
# torch: ok
import copy

import torch
from torch import nn


def train(model, x, y, epochs):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    best_loss, best = float("inf"), None
    for _ in range(epochs):
        loss = nn.functional.mse_loss(model(x), y)
        if loss.item() < best_loss:
            best_loss = loss.item()
            best = copy.deepcopy(model.state_dict())
        opt.zero_grad()
        loss.backward()
        opt.step()
    return best, best_loss


torch.manual_seed(0)
net = nn.Linear(3, 1)
x, y = torch.randn(32, 3), torch.randn(32, 1)
best, best_loss = train(net, x, y, 5)
net.load_state_dict(best)
with torch.no_grad():
    restored = nn.functional.mse_loss(net(x), y).item()
if abs(restored - best_loss) > 1e-6:
    raise SystemExit(1)
