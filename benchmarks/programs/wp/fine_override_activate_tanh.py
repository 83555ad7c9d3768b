# source: https://github.com/huggingface/pytorch-image-models/blob/16664ea31ba52dc55c3744e69741fffddb4845da/timm/layers/squeeze_excite.py @ 16664ea31ba52dc55c3744e69741fffddb4845da
# expect: none
# torch: ok
import torch
from torch import nn


class SEBase(nn.Module):
    def __init__(self, channels, reduction=4):
        super().__init__()
        self.fc1 = nn.Linear(channels, channels // reduction)
        self.fc2 = nn.Linear(channels // reduction, channels)

    def gate(self, g):
        return g

    def forward(self, x):
        s = x.mean(dim=(2, 3))
        g = torch.tanh(self.fc2(torch.relu(self.fc1(s))))
        g = self.gate(g)
        return x * g[:, :, None, None]


class HardSE(SEBase):
    def gate(self, g):
        # squash into [0, 1] without a second allocation
        return (g + 1.0) * 0.5


torch.manual_seed(0)
block = HardSE(8)
out = block(torch.randn(2, 8, 5, 5))
out.sum().backward()
