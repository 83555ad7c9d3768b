from torch import nn

from heads import build_head


class MultiTaskNet(nn.Module):
    def __init__(self, in_dim, dim, tasks):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(in_dim, dim), nn.LayerNorm(dim), nn.Linear(dim, dim))
        self.heads = nn.ModuleDict({task: build_head(task, dim) for task in tasks})

    def forward(self, x):
        feats = self.trunk(x)
        return {task: head(feats) for task, head in self.heads.items()}
