"""AL101 inplace-on-saved-tensor: its positive and negative cases (format: tests/test_rules.py)."""


# case: sigmoid result written
# runs: raises RuntimeError
import torch
w = torch.randn(3, requires_grad=True)
y = torch.sigmoid(w)
y.mul_(2)  # error: AL101
y.sum().backward()


# case: write through a view
# runs: raises RuntimeError
import torch
w = torch.randn(3, requires_grad=True)
y = w.exp()
view = y[1:]
view.zero_()  # error: AL101
loss = y.sum()
loss.backward()


# case: item assignment
# runs: raises RuntimeError
import torch
w = torch.randn(3, requires_grad=True)
y = torch.tanh(w)
y[0] = 0.0  # error: AL101
y.sum().backward()


# case: out argument
import torch
w = torch.randn(3, requires_grad=True)
y = torch.exp(w)
z = torch.empty(3)
torch.add(w, 1, out=y)  # error: AL101
y.sum().backward()


# case: retain graph keeps the saves
# runs: raises RuntimeError
import torch
w = torch.randn(3, requires_grad=True)
y = w.sigmoid()
loss = y.sum()
loss.backward(retain_graph=True)
y += 1  # error: AL101
loss.backward()


# case: optimizer step before backward
import torch
from torch import nn
net = nn.Sequential(nn.Linear(2, 2), nn.Sigmoid())
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.randn(4, 2, requires_grad=True)
loss = net(x).sum()
opt.step()  # error: AL101
loss.backward()


# case: write inside a local function
# runs: raises RuntimeError
import torch
def scale_(t):
    t.mul_(2)
w = torch.randn(3, requires_grad=True)
y = w.sigmoid()
scale_(y)  # error: AL101
y.sum().backward()


# case: loop carried
# runs: raises RuntimeError
import torch
W = torch.randn(4, 4, requires_grad=True)
h = torch.zeros(4)
for _ in range(3):
    h = torch.tanh(W @ h)
    h.add_(1)  # error: AL101
h.sum().backward()


# case: second inplace op on a saved result
import torch
from torch import nn
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU(inplace=True)
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        x = self.act(self.fc(x))
        h = torch.relu_(x)  # error: AL101
        return h + x


# case: nothing requires grad
import torch
x = torch.randn(3)
y = torch.sigmoid(x)
y.mul_(2)


# case: write after backward
# runs: ok
import torch
w = torch.randn(3, requires_grad=True)
y = torch.sigmoid(w)
loss = y.sum()
loss.backward()
y.mul_(2)


# case: decorated grad off
import torch
w = torch.randn(3, requires_grad=True)
@torch.no_grad()
def update(p: torch.Tensor):
    p.add_(1)
@torch.inference_mode()
def infer():
    y = torch.sigmoid(w)
    y.mul_(2)
    return y


# case: no backward follows
import torch
w = torch.randn(3, requires_grad=True)
y = torch.exp(w)
y.add_(1)


# case: op that saves nothing needed
import torch
w = torch.randn(3, requires_grad=True)
y = w * 2
y.mul_(3)
y.sum().backward()


# case: no visible backward
import torch
def helper(loss):
    pass
w = torch.randn(3, requires_grad=True)
y = w.sigmoid()
helper(y.sum())
y.mul_(2)


# case: rebound on every path
import torch
w = torch.randn(3, requires_grad=True)
y = w.sigmoid()
if y.sum() > 0:
    y = y * 2
else:
    y = y + 1
y.add_(1)
y.sum().backward()
