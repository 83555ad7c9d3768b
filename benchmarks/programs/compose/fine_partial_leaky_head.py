# source: https://github.com/huggingface/pytorch-image-models/blob/aa4b5850c1543fa488abf260f18390eda46cf85d/timm/layers/create_act.py @ aa4b5850c1543fa488abf260f18390eda46cf85d
# expect: none
# torch: ok
# The partial binds inplace=False.
import functools

import torch
import torch.nn.functional as F
from torch import nn


def get_act_fn(name, inplace=False):
    if name == "leaky_relu":
        return functools.partial(F.leaky_relu, negative_slope=0.1, inplace=inplace)
    if name == "gelu":
        return F.gelu
    raise ValueError(name)


class BoundedHead(nn.Module):
    def __init__(self, dim, out_dim, act_fn):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, out_dim)
        self.act_fn = act_fn

    def forward(self, x):
        h = torch.tanh(self.fc(x))
        h = self.act_fn(h)
        return self.out(h)


torch.manual_seed(0)
head = BoundedHead(12, 3, act_fn=get_act_fn("leaky_relu", inplace=False))
opt = torch.optim.SGD(head.parameters(), lr=0.1)
for _ in range(2):
    loss = F.cross_entropy(head(torch.randn(6, 12)), torch.randint(0, 3, (6,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
print(loss.item())
