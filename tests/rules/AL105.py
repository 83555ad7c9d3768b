"""AL105 inplace-activation-clobbers-input: its positive and negative cases (format: tests/test_rules.py)."""


# case: functional inplace activation
# runs: raises RuntimeError
import torch
import torch.nn.functional as F
w = torch.randn(3, requires_grad=True)
s = torch.sigmoid(w)
F.relu(s, inplace=True)  # error: AL105
s.sum().backward()


# case: inplace module clobbers skip
import torch
from torch import nn
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU(inplace=True)  # error: AL105
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        skip = x
        h = self.act(x)
        return self.fc(h) + skip


# case: inplace on fresh tensors
import torch
from torch import nn
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU(inplace=True)
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        x = self.act(self.fc(x))
        return x + 1


# case: leaky relu module with a negative slope in place
# runs: raises RuntimeError
import torch
from torch import nn
class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)
        self.act = nn.LeakyReLU(-0.2, inplace=True)  # error: AL105
        self.out = nn.Linear(16, 1)
    def forward(self, x):
        return self.out(self.act(self.fc(x)))
disc = Discriminator()
disc(torch.randn(8, 16)).mean().backward()


# case: functional negative slopes in place
# runs: raises RuntimeError
import torch
import torch.nn.functional as F
w = torch.randn(6, 6, requires_grad=True)
h = torch.randn(3, 6) @ w
F.leaky_relu(h, negative_slope=-0.1, inplace=True)  # error: AL105
h.sum().backward()


# case: elu with a negative alpha in place
# runs: raises RuntimeError
import torch
import torch.nn.functional as F
w = torch.randn(6, 6, requires_grad=True)
g = torch.randn(3, 6) @ w
F.elu_(g, alpha=-1.0)  # error: AL105
g.pow(2).sum().backward()


# case: elu module with a negative alpha
# runs: raises RuntimeError
import torch
from torch import nn
net = nn.Sequential(nn.Linear(4, 4), nn.ELU(alpha=-0.5, inplace=True))  # error: AL105
loss = net(torch.randn(2, 4)).sum()
loss.backward()


# case: rrelu in eval with a negative range
# runs: raises RuntimeError
import torch
import torch.nn.functional as F
w = torch.randn(6, 6, requires_grad=True)
r = torch.randn(3, 6) @ w
F.rrelu(r, -0.3, -0.1, inplace=True)  # error: AL105
r.mean().backward()


# case: slopes that the in-place backward accepts
# runs: ok
import torch
import torch.nn.functional as F
from torch import nn
w = torch.randn(6, 6, requires_grad=True)
a = torch.randn(3, 6) @ w
F.leaky_relu(a, 0.0, inplace=True)
b = torch.randn(3, 6) @ w
F.leaky_relu(b, -0.1)
c = torch.randn(3, 6) @ w
F.rrelu(c, -0.3, -0.1, training=True, inplace=True)
d = torch.randn(3, 6) @ w
d = nn.RReLU(-0.3, -0.1, inplace=True)(d)
(a.sum() + b.sum() + c.sum() + d.sum()).backward()
with torch.no_grad():
    e = torch.randn(3, 6) @ w
    F.leaky_relu(e, -0.1, inplace=True)


# case: the torch function of an in-place activation, and one looked up by name
# runs: raises RuntimeError
import torch
w = torch.randn(4, 4, requires_grad=True)
h = torch.tanh(torch.randn(2, 4) @ w)
torch.relu_(h)  # error: AL105
act = getattr(torch, "relu_")
g = torch.tanh(torch.randn(2, 4) @ w)
act(g)  # error: AL105
(h.sum() + g.sum()).backward()
