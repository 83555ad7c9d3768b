import torch
from torch import nn

from .ops import sharpen


class AttentionPool(nn.Module):
    def __init__(self, dim, classes):
        super().__init__()
        self.score = nn.Linear(dim, 1)
        self.head = nn.Linear(dim, classes)

    def forward(self, tokens):
        weights = torch.softmax(self.score(tokens).squeeze(-1), dim=-1)
        weights = sharpen(weights)
        pooled = (weights.unsqueeze(-1) * tokens).sum(dim=1)
        return self.head(pooled)
