"""AL401 id-sharing-check: its positive and negative cases (format: tests/test_rules.py)."""


# case: id of tensors
import torch
a = torch.zeros(4)
b = a[1:]
same = id(a) == id(b)  # error: AL401


# case: id not equal import alias
import torch as t
a = t.ones(2, 3)
if id(a.t()) != id(a):  # error: AL401
    pass


# case: id of data
import torch
x = torch.randn(3, requires_grad=True)
y = x * 2
print(id(x.data) == id(y))  # error: AL401


# case: id of typed storage
import torch
a = torch.zeros(4)
print(id(a.storage()) == id(a[2:].storage()))  # error: AL401, AL404, AL404


# case: inside comprehension
import torch
x = torch.zeros(3)
found = [i for i, t in enumerate([x]) if id(x) == id(x[0:])]  # error: AL401


# case: global bound once
import torch
x = torch.zeros(3)
def later():
    return id(x) == id(x[1:])  # error: AL401


# case: untyped storage identity
import torch
def f(a: torch.Tensor, b: torch.Tensor):
    # One Python object per storage since torch 2.2: identity is meaningful.
    return id(a.untyped_storage()) == id(b.untyped_storage()) or (
        a.untyped_storage() is b.untyped_storage())


# case: id of self
import torch
from torch import nn
class M(nn.Module):
    def forward(self, x):
        cache = {id(self): x}
        return id(self) == id(x)


# case: rebound to int
import torch
x = torch.zeros(3)
x = 5
print(id(x) == id(5))


# case: shadowed torch parameter
import torch
def torch_free(torch, a, b):
    return id(torch.zeros(1)) == id(b)


# case: global rebound before call
import torch
x = torch.zeros(3)
def later():
    return id(x) == id(x[1:])
x = None


# case: no torch in file
x = 1
print(id(x) == id(x))
