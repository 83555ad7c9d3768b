import torch
from torch import nn


class MultiLabelHead(nn.Module):
    def __init__(self, dim, labels):
        super().__init__()
        self.fc = nn.Linear(dim, labels)

    def post(self, probs):
        """Hook for subclasses: adjust the predicted probabilities."""
        return probs

    def forward(self, x):
        probs = torch.sigmoid(self.fc(x))
        return self.post(probs)
