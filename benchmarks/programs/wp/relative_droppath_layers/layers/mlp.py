import torch
from torch import nn

from .drop import DropPath


class Mlp(nn.Module):
    def __init__(self, dim, hidden, drop_path=0.0):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)
        self.drop_path = DropPath(drop_path)

    def forward(self, x):
        h = self.fc2(torch.relu(self.fc1(x)))
        return self.drop_path(torch.tanh(h))
