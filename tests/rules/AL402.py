"""AL402 is-sharing-check: its positive and negative cases (format: tests/test_rules.py)."""


# case: is and is not
from torch import Tensor
def same(a: Tensor, b: Tensor) -> bool:
    return a is b or a.untyped_storage() is not b.untyped_storage()  # error: AL402


# case: forward parameters
import torch
from torch import nn
class Block(nn.Module):
    def forward(self, x, residual):
        if residual is x:  # error: AL402
            return x
        return x + residual


# case: join of two tensors
import torch
x = torch.zeros(3)
if True:
    y = x.view(3)
else:
    y = x.clone()
print(x is y)  # error: AL402


# case: non tensor and none
import torch
a = torch.zeros(3)
n = 3
print(id(n) == id(3), a is None, a is not None)


# case: unknown attributes
import torch
def tied(model) -> bool:
    return model.head.weight is model.embed.weight


# case: one side unknown
import torch
def f(x):
    y = torch.zeros(3)
    return x is y


# case: loop rebinding
import torch
x = torch.zeros(3)
for x in range(3):
    pass
print(x is 1)


# case: an in-place helper checked to return its argument itself
# runs: ok
import torch
def drop_(x, inplace=True):
    if inplace:
        return x.mul_(0.5)
    return x * 0.5
x = torch.ones(2, 3)
result = drop_(x)
assert result is x, "in place returns the same tensor"
