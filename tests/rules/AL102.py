"""AL102 inplace-on-leaf: its positive and negative cases (format: tests/test_rules.py)."""


# case: leaf writes
# runs: raises RuntimeError
import torch
w = torch.randn(3, requires_grad=True)
w.zero_()  # error: AL102
w[0] = 1.0  # error: AL102
w += 1  # error: AL102


# case: parameter written in forward
import torch
from torch import nn
class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.gain = nn.Parameter(torch.ones(4))
    def forward(self, x):
        self.gain.clamp_(min=0.0)  # error: AL102
        return x * self.gain


# case: parameters loop without no grad
# runs: raises RuntimeError
import torch
from torch import nn
model = nn.Linear(4, 2)
for p in model.parameters():
    p.mul_(0.5)  # error: AL102


# case: no grad block
# runs: ok
import torch
w = torch.randn(3, requires_grad=True)
with torch.no_grad():
    y = torch.sigmoid(w)
    y.mul_(2)
    w.add_(1)


# case: training loop in order
import torch
from torch import nn
model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for batch in [torch.randn(2, 4)]:
    opt.zero_grad()
    loss = model(batch).pow(2).mean()
    loss.backward()
    opt.step()
    with torch.no_grad():
        for p in model.parameters():
            p.clamp_(-1, 1)
    for p in model.parameters():
        p.data.add_(p.grad, alpha=-0.1)


# case: leaf written through detach or data
import torch
w = torch.randn(3, requires_grad=True)
w.detach().zero_()
w.data.fill_(1.0)
w.requires_grad_(True)
w.grad = None
