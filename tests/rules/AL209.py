"""AL209 data-assigned-to-temporary: its positive and negative cases (format: tests/test_rules.py)."""


# case: rows of an activation buffer
# runs: ok
import torch
acts = torch.zeros(4, 5)
acts[1:3].data = torch.ones(2, 5)  # error: AL209
assert acts.sum().item() == 0.0


# case: transposed weight of a layer
# runs: ok
import torch
from torch import nn
layer = nn.Linear(3, 2)
before = layer.weight.detach().clone()
layer.weight.t().data = torch.zeros(3, 2)  # error: AL209
assert torch.equal(layer.weight, before)


# case: data of a name and of an attribute
# runs: ok
import torch
from torch import nn
layer = nn.Linear(3, 2)
w = torch.zeros(2, 3)
w.data = torch.ones(2, 3)
layer.weight.data = torch.zeros(2, 3)
assert w.sum().item() == 6.0 and layer.weight.sum().item() == 0.0


# case: a container element, not a tensor expression
# runs: ok
import torch
params = [torch.zeros(2), torch.zeros(2)]
params[0].data = torch.ones(2)
assert params[0].sum().item() == 2.0
