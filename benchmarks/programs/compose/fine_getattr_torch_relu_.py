# source: https://github.com/huggingface/pytorch-image-models/blob/aa4b5850c1543fa488abf260f18390eda46cf85d/timm/layers/create_act.py @ aa4b5850c1543fa488abf260f18390eda46cf85d
# expect: none
# torch: ok
# The lookup is getattr(torch, "relu").
import torch
from torch import nn


class GatedBlock(nn.Module):
    """act(x) -> linear -> tanh gate; the activation function is looked up by name."""

    def __init__(self, dim):
        super().__init__()
        self.act_fn = getattr(torch, "relu")
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.act_fn(x)
        return torch.tanh(self.fc(h))


class Stack(nn.Module):
    def __init__(self, dim, depth):
        super().__init__()
        self.inp = nn.Linear(8, dim)
        self.blocks = nn.ModuleList(GatedBlock(dim) for _ in range(depth))
        self.out = nn.Linear(dim, 1)

    def forward(self, x):
        x = self.inp(x)
        for blk in self.blocks:
            x = blk(x)
        return self.out(x)


torch.manual_seed(0)
model = Stack(16, depth=3)
loss = model(torch.randn(10, 8)).pow(2).mean()
loss.backward()
print(loss.item())
