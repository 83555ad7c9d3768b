from torch import nn


class BoxHead(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, 16)
        self.deltas = nn.Linear(16, 2)

    def forward(self, x):
        return self.deltas(self.fc(x).relu())
