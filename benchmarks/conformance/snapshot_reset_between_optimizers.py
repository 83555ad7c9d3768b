# source: https://github.com/dvgodoy/PyTorchStepByStep/pull/28 (model_state = model.state_dict() taken to start a second optimizer from the same weights; it followed the first run)
# expect: AL207 at line 30
# torch: wrong "the Adam run starts from the weights SGD left, not from the initial ones"
import torch
from torch import nn


def make_data(n):
    x = torch.rand(n, 1)
    return x, 2.0 * x + 1.0 + 0.1 * torch.randn(n, 1)


def fit(model, optimizer, x, y, steps):
    """Train and return the loss before each step."""
    losses = []
    for _ in range(steps):
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


torch.manual_seed(42)
x, y = make_data(64)
model = nn.Sequential()
model.add_module("linear", nn.Linear(1, 1))
# Both optimizers should start from these weights.
initial_state = model.state_dict()
sgd_losses = fit(model, torch.optim.SGD(model.parameters(), lr=0.1), x, y, 20)
model.load_state_dict(initial_state)
adam_losses = fit(model, torch.optim.Adam(model.parameters(), lr=0.1), x, y, 20)
if abs(adam_losses[0] - sgd_losses[0]) > 1e-6:
    raise SystemExit(1)
