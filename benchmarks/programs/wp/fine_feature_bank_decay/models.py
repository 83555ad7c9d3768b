import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self, dim_in, dim_out):
        super().__init__()
        self.fc = nn.Linear(dim_in, dim_out)

    def forward(self, x):
        return torch.sigmoid(self.fc(x))
