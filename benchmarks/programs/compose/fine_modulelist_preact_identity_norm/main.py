# source: https://github.com/huggingface/pytorch-image-models/blob/aa4b5850c1543fa488abf260f18390eda46cf85d/timm/models/resnet.py @ aa4b5850c1543fa488abf260f18390eda46cf85d
# expect: none
# torch: ok
# The block's ReLU runs out of place.
import torch
import torch.nn.functional as F
from torch import nn

from blocks import PreActBlock


class ResidualMLP(nn.Module):
    def __init__(self, dim, depth, norm):
        super().__init__()
        self.blocks = nn.ModuleList([PreActBlock(dim, norm=norm) for _ in range(depth)])
        self.head = nn.Linear(dim, 1)

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        return self.head(x)


def reference(model, x):
    for blk in model.blocks:
        x = x + blk.fc(F.relu(x))
    return model.head(x)


torch.manual_seed(0)
model = ResidualMLP(16, depth=3, norm="none")
x = torch.randn(8, 16)
out = model(x.clone())
out.sum().backward()
with torch.no_grad():
    expected = reference(model, x)
if not torch.allclose(out, expected):
    raise SystemExit(1)
