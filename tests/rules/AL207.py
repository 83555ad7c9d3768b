"""AL207 snapshot-by-reference: its positive and negative cases (format: tests/test_rules.py)."""


# case: state dict and parameter list
import torch
from torch import nn
model = nn.Linear(2, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
best = model.state_dict()  # error: AL207
old = list(model.parameters())  # error: AL207
opt.step()
model.load_state_dict(best)
print(old)


# case: plain alias
import torch
w = torch.rand(3)
prev = w  # error: AL207
w.add_(0.1)
print((w - prev).abs().max())


# case: real copies
import copy
import torch
from torch import nn
model = nn.Linear(2, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
best = copy.deepcopy(model.state_dict())
clones = {k: v.clone() for k, v in model.state_dict().items()}
opt.step()
model.load_state_dict(best)
w = torch.rand(3)
prev = w.clone()
w.add_(0.1)
print(prev, clones)


# case: anchor weights collected by a comprehension
# runs: raises AssertionError
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
anchor = {k: v for k, v in model.state_dict().items()}  # error: AL207
teacher = [p.detach() for p in model.parameters()]  # error: AL207
x, y = torch.randn(8, 4), torch.randn(8, 2)
nn.functional.mse_loss(model(x), y).backward()
opt.step()
drift = sum((p - anchor[k]).pow(2).sum() for k, p in model.named_parameters())
assert drift.item() > 0 and not torch.equal(teacher[0], model.weight)


# case: the weight kept to measure an update
# runs: raises AssertionError
import torch
import torch.nn.functional as F
from torch import nn
torch.manual_seed(0)
model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(16, 4), torch.randn(16, 1)
previous = model.weight  # error: AL207
F.mse_loss(model(x), y).backward()
opt.step()
assert (model.weight - previous).norm().item() > 0


# case: a gradient kept across backward passes that accumulate into it
# runs: raises AssertionError
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
model(torch.randn(4, 3)).pow(2).mean().backward()
first = model.weight.grad  # error: AL207
model(torch.randn(4, 3)).pow(2).mean().backward()
second = model.weight.grad - first
model(torch.randn(4, 3)).pow(2).mean().backward()
prev = model.bias.grad  # error: AL207
opt.zero_grad(set_to_none=False)
model(torch.randn(4, 3) * 3.0).pow(2).mean().backward()
agreement = nn.functional.cosine_similarity(prev, model.bias.grad, dim=0)
assert second.abs().sum().item() > 0 and agreement.item() < 0.9999


# case: handles on the current tensors, and gradients the default zero_grad replaces
# runs: ok
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
params = [p for p in model.parameters() if p.requires_grad]
weight = model.weight
model(torch.randn(4, 3)).pow(2).mean().backward()
prev = model.weight.grad
opt.step()
print(weight.norm())
opt.zero_grad()
model(torch.randn(4, 3)).pow(2).mean().backward()
change = (model.weight.grad - prev).norm()
with torch.no_grad():
    clones = [p.detach().clone() for p in model.parameters()]
opt.step()
print(clones[0], change)
assert change.item() > 0


# case: the best weights kept while a helper runs the epoch and another unwraps the model
# runs: raises AssertionError
import torch
from torch import nn


def unwrap(model):
    return model.module if hasattr(model, "module") else model


def best_weights(model):
    return unwrap(model).state_dict()


def train_epoch(model, opt, x, y):
    for xb, yb in zip(x.split(8), y.split(8)):
        opt.zero_grad()
        nn.functional.mse_loss(model(xb), yb).backward()
        opt.step()


torch.manual_seed(0)
model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.5)
x, y = torch.randn(32, 4), torch.randn(32, 1)
best, kept = float("inf"), None
for epoch in range(4):
    train_epoch(model, opt, x, y)
    with torch.no_grad():
        loss = nn.functional.mse_loss(model(x), y).item()
    if loss < best:
        best, kept = loss, best_weights(model)  # error: AL207
    x = x.flip(0)
model.load_state_dict(kept)
with torch.no_grad():
    assert abs(nn.functional.mse_loss(model(x.flip(0)), y).item() - best) < 1e-6


# case: an in-memory checkpoint dict kept for a rollback
# runs: raises AssertionError
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Embedding(10, 8), nn.Linear(8, 10))
opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
data = torch.randint(0, 10, (16, 5))
rollback = None
for step in range(6):
    loss = nn.functional.cross_entropy(model(data[:, :-1]).flatten(0, 1), data[:, 1:].flatten())
    if step == 2:
        rollback = {"model": model.state_dict(), "step": step}  # error: AL207
        weights = model[1].weight.detach().clone()
    opt.zero_grad()
    loss.backward()
    opt.step()
model.load_state_dict(rollback["model"])
assert torch.equal(model[1].weight, weights)


# case: copies kept by the same helpers and checkpoint
import copy
import torch
from torch import nn


def best_weights(model):
    return copy.deepcopy(model.state_dict())


def train_epoch(model, opt, x, y):
    opt.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    opt.step()


model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.5)
x, y = torch.randn(32, 4), torch.randn(32, 1)
kept = best_weights(model)
checkpoint = {"model": copy.deepcopy(model.state_dict()), "step": 0}
for epoch in range(3):
    train_epoch(model, opt, x, y)
model.load_state_dict(kept)
model.load_state_dict(checkpoint["model"])
