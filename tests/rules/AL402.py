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


# case: an optimizer step asks whether a dtype conversion copied
# runs: ok
import torch


@torch.no_grad()
def sign_step_(param: torch.Tensor, grad: torch.Tensor, lr: float) -> None:
    original = grad
    if grad.dtype != torch.float32:
        grad = grad.to(torch.float32)
    work = param.float()
    if grad is not original:  # a private float32 copy: centre it in place
        grad.sub_(grad.mean())
    else:
        grad = grad - grad.mean()
    update = grad.sign() * lr
    if work is not param:  # a float32 copy of a low-precision parameter: write back
        param.copy_(work - update)
    else:
        param.sub_(update)


weight = torch.ones(3, 2, dtype=torch.bfloat16)
gradient = torch.tensor([[1.0, -1.0], [2.0, 0.0], [-3.0, 4.0]], dtype=torch.bfloat16)
sign_step_(weight, gradient, 0.5)
assert gradient[0, 0] == 1.0  # the caller's gradient was converted, not centred in place
assert weight.dtype == torch.bfloat16 and weight[0, 0] == 0.5


# case: the same step over lists of parameters
# runs: ok
import torch


@torch.no_grad()
def foreach_sign_step_(params: list[torch.Tensor], grads: list[torch.Tensor], lr: float):
    values = [p.to(dtype=torch.float32) for p in params]
    for value, grad in zip(values, grads):
        value.sub_(grad.float().sign(), alpha=lr) if value is not grad else None
    if values[0] is not params[0]:
        torch._foreach_copy_(params, values)


weights = [torch.ones(2, dtype=torch.bfloat16), torch.ones(3, dtype=torch.bfloat16)]
foreach_sign_step_(weights, [torch.ones(2), -torch.ones(3)], 0.5)
assert weights[0].tolist() == [0.5, 0.5] and weights[1].tolist() == [1.5, 1.5, 1.5]


# case: a penalty anchored at a detached parameter, which is the parameter's memory
# runs: ok
import torch
from torch import nn

model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.5)
anchor = model.weight.detach()
assert anchor is not model.weight  # error: AL402
for _ in range(3):
    inputs = torch.randn(8, 4)
    loss = model(inputs).pow(2).mean() + (model.weight - anchor).pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
# `is not` held, yet the anchor moved with every step: one storage.
assert anchor.untyped_storage().data_ptr() == model.weight.untyped_storage().data_ptr()
assert torch.equal(anchor, model.weight.detach())


# case: the same penalty anchored at a clone
# runs: ok
import torch
from torch import nn

model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.5)
anchor = model.weight.detach().clone()
assert anchor is not model.weight
for _ in range(3):
    inputs = torch.randn(8, 4)
    loss = model(inputs).pow(2).mean() + (model.weight - anchor).pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
assert not torch.equal(anchor, model.weight.detach())


# case: a training loop compares a parameter with a view of it
# runs: ok
import torch
from torch import nn

model = nn.Linear(3, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
diagonal = model.weight.diagonal()
flat = model.weight.view(-1)
for _ in range(2):
    loss = model(torch.randn(4, 3)).square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if diagonal is model.weight or flat is model.weight:  # error: AL402, AL402
        raise SystemExit("never: views are other objects")
assert torch.equal(diagonal, model.weight.detach().diagonal())  # yet they follow every step


# case: a conversion compared with a view of its input
# runs: ok
import torch

frames = torch.rand(4, 3)
row = frames[0]
converted = frames.float()
assert converted is not row  # error: AL402
assert converted.untyped_storage().data_ptr() == row.untyped_storage().data_ptr()


# case: reshape may return a view of its input
# runs: ok
import torch


def flatten_once(x: torch.Tensor) -> torch.Tensor:
    flat = x.reshape(-1)
    if flat is x:  # error: AL402
        return flat.clone()
    return flat


grid = torch.zeros(2, 3)
flat = flatten_once(grid)
flat[0] = 1.0  # the "not the input, so a copy" guess was wrong: a view of grid
assert grid[0, 0] == 1.0


# case: fresh tensors against an argument and against each other
import torch


def fresh(x: torch.Tensor) -> bool:
    y = torch.zeros(3)
    z = x.clone()
    return x is y or z is x or y is z
