from torch import nn


class ResidualMLPBlock(nn.Module):
    """x + fc2(act(fc1(act(x)))), the activation given by the caller as a function."""

    def __init__(self, dim, activation):
        super().__init__()
        self.activation = activation
        self.fc1 = nn.Linear(dim, dim)
        self.fc2 = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.activation(x)
        h = self.fc2(self.activation(self.fc1(h)))
        return x + h
