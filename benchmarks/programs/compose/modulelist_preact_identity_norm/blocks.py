from torch import nn

from norms import get_norm


class PreActBlock(nn.Module):
    """x + fc(act(norm(x))): normalise and activate first, add the untouched input back."""

    def __init__(self, dim, norm="bn"):
        super().__init__()
        self.norm = get_norm(norm, dim)
        self.act = nn.ReLU(inplace=True)
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return x + self.fc(self.act(self.norm(x)))
