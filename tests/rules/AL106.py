"""AL106 inplace-on-forbidden-view: its positive and negative cases (format: tests/test_rules.py)."""


# case: unbind output written
# runs: raises RuntimeError
import torch
z = torch.randn(2, 3, requires_grad=True) * 1.0
first, second = z.unbind(0)
second.add_(1.0)  # error: AL106


# case: attention heads from chunk scaled in place
# runs: raises RuntimeError
import torch
from torch import nn
class Attention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.scale = dim ** -0.5
    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q.mul_(self.scale)  # error: AL106
        attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        return attn @ v
attention = Attention(8)
attention(torch.randn(2, 4, 8)).sum().backward()


# case: split of a leaf parameter
# runs: raises RuntimeError
import torch
w = torch.randn(6, requires_grad=True)
head, tail = torch.split(w, 3)
tail.zero_()  # error: AL106


# case: iterating a tensor and writing each row
# runs: raises RuntimeError
import torch
from torch import nn
encoder = nn.Linear(4, 4)
rows = encoder(torch.randn(3, 4))
for row in rows:
    row[0] = 0.0  # error: AL106


# case: view made under no_grad written with grad on
# runs: raises RuntimeError
import torch
from torch import nn
proj = nn.Linear(5, 5)
hidden = proj(torch.randn(2, 5))
with torch.no_grad():
    tail = hidden[:, 1:]
tail.clamp_(min=0.0)  # error: AL106


# case: custom Function returns its input
# runs: raises RuntimeError
import torch
class Identity(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)
    @staticmethod
    def backward(ctx, grad):
        return grad
x = torch.randn(3, requires_grad=True) * 2.0
y = Identity.apply(x)
y.add_(1.0)  # error: AL106


# case: pack hook writes its input
# runs: raises RuntimeError
import torch
def pack(t):
    t.mul_(0.5)  # error: AL106
    return t
def unpack(t):
    return t
x = torch.randn(4, requires_grad=True) * 1.0
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    y = x.exp()
y.sum().backward()


# case: tensor_split lowers to slices
# runs: ok
import torch
z = torch.randn(4, 3, requires_grad=True) * 1.0
left, right = torch.tensor_split(z, 2)
right.add_(1.0)
(left * right).sum().backward()


# case: chunks written under no_grad, and cloned chunks
# runs: ok
import torch
z = torch.randn(4, 3, requires_grad=True) * 1.0
a, b = z.chunk(2)
with torch.no_grad():
    a.mul_(0.0)
    total = b.sum()
h = torch.randn(4, 3, requires_grad=True)
c, d = (h * 2.0).chunk(2)
e = d.clone()
e.add_(1.0)
(c * e).sum().backward()


# case: chunk of a tensor that does not require grad
# runs: ok
import torch
buffer = torch.zeros(4, 3)
top, bottom = buffer.chunk(2)
top.fill_(1.0)
for row in buffer:
    row.add_(1.0)


# case: view and write both under no_grad
# runs: ok
import torch
from torch import nn
layer = nn.Linear(5, 5)
with torch.no_grad():
    block = layer.weight[:2]
    block.mul_(0.5)


# case: custom Function returning a new tensor
# runs: ok
import torch
class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2
    @staticmethod
    def backward(ctx, grad):
        return grad * 2
x = torch.randn(3, requires_grad=True)
y = Double.apply(x)
y.add_(1.0)
y.sum().backward()


# case: pack hook that copies
# runs: ok
import torch
def pack(t):
    t = t.clone()
    t.mul_(1.0)
    return t
x = torch.randn(4, requires_grad=True) * 1.0
with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
    y = x.exp()
y.sum().backward()
