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


# case: weight of a layer built here initialised outside no grad
# runs: raises RuntimeError
import torch
from torch import nn
head = nn.Linear(16, 8)
head.weight.normal_(0.0, 0.02)  # error: AL102


# case: leaves made by requires grad
# runs: raises RuntimeError
import torch
codes = torch.zeros(6).requires_grad_()
codes -= 0.1  # error: AL102
scale = torch.ones(2); scale.requires_grad = True
scale.mul_(3.0)  # error: AL102
w = torch.randn(3, 4)
w.requires_grad_()
w[:, 1] += 1.0  # error: AL102


# case: leaf returned by a local factory
# runs: raises RuntimeError
import torch
def make_prompt(n):
    return torch.zeros(n, 8, requires_grad=True)
prompt = make_prompt(4)
prompt[0] = 1.0  # error: AL102


# case: weight of a layer from a local factory
# runs: raises RuntimeError
import torch
from torch import nn
def conv3x3(channels):
    return nn.Conv2d(channels, channels, 3, padding=1, bias=True)
stem = conv3x3(4)
stem.weight.zero_()  # error: AL102


# case: layer initialisation the supported ways
# runs: ok
import torch
from torch import nn
head = nn.Linear(16, 8)
nn.init.normal_(head.weight, 0.0, 0.02)
nn.init.zeros_(head.bias)
with torch.no_grad():
    head.weight.fill_(0.1)
head.weight.data.normal_()
table = nn.Embedding.from_pretrained(torch.randn(10, 4))
table.weight.mul_(2.0)
plain = nn.Linear(4, 4, bias=False)
with torch.no_grad():
    plain.weight.zero_()


# case: weights of a frozen module
# runs: ok
import torch
from torch import nn
frozen = nn.Linear(4, 4).requires_grad_(False)
frozen.weight.add_(1.0)


# case: layer of a model class built at module level
# runs: raises RuntimeError
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)
    def forward(self, x):
        return self.fc(x)
net = Net(4)
net.fc.weight.normal_()  # error: AL102


# case: a leaf made by the Variable constructor
# runs: raises RuntimeError
import torch
from torch.autograd import Variable
w = Variable(torch.randn(3, 3), requires_grad=True)
w.add_(1.0)  # error: AL102


# case: EMA update without no_grad
# runs: raises RuntimeError
import torch
from torch import nn
net = nn.Linear(4, 4)
ema = nn.Linear(4, 4)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for x in [torch.randn(2, 4)]:
    loss = net(x).pow(2).sum()
    loss.backward()
    opt.step()
    for p_ema, p in zip(ema.parameters(), net.parameters()):
        p_ema.mul_(0.99).add_(p.detach(), alpha=0.01)  # error: AL102


# case: EMA update of a frozen copy
# runs: ok
import copy
import torch
from torch import nn
net = nn.Linear(4, 4)
ema = copy.deepcopy(net)
for p in ema.parameters():
    p.requires_grad_(False)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for x in [torch.randn(2, 4)]:
    loss = net(x).pow(2).sum()
    loss.backward()
    opt.step()
    for p_ema, p in zip(ema.parameters(), net.parameters()):
        p_ema.mul_(0.99).add_(p.detach(), alpha=0.01)


# case: an initialiser helper fills a parameter through .data (a graph layer's reset)
# runs: ok
import math
import torch
from torch import nn
def glorot(value):
    stdv = math.sqrt(6.0 / (value.size(-2) + value.size(-1)))
    value.data.uniform_(-stdv, stdv)
class GraphConv(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(d, d))
        self.reset_parameters()
    def reset_parameters(self):
        glorot(self.weight)
    def forward(self, x):
        return x @ self.weight
GraphConv(4)(torch.randn(2, 4)).sum().backward()
