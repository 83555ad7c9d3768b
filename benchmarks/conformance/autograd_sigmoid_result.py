# source: user report pattern: in-place add on a sigmoid output inside forward
# expect: AL101 at line 15
# torch: raises RuntimeError "modified by an inplace operation"
import torch
from torch import nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 1)

    def forward(self, x):
        p = torch.sigmoid(self.fc(x))
        p += 1e-6
        return p.log()


model = Scorer()
model(torch.randn(5, 6)).mean().backward()
