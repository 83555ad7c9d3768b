# source: https://github.com/facebookresearch/detectron2/blob/02b5c4e295e990042a714712c21dc79b731e8833/detectron2/modeling/backbone/fpn.py @ 02b5c4e295e990042a714712c21dc79b731e8833
# expect: AL101 at line 23
# torch: raises RuntimeError "modified by an inplace operation"
# {**maps} copies the dict only; the helper's mul_ writes the sigmoid attention maps that sigmoid saved.
import torch
from torch import nn


class SpatialAttention(nn.Module):
    """One sigmoid attention map per pyramid level."""

    def __init__(self, levels, channels=8):
        super().__init__()
        self.convs = nn.ModuleDict({name: nn.Conv2d(channels, 1, 3, padding=1) for name in levels})

    def forward(self, feats):
        return {name: torch.sigmoid(conv(feats[name])) for name, conv in self.convs.items()}


def rescale(maps, level_weights):
    out = {**maps}
    for name, w in level_weights.items():
        out[name].mul_(w)
    return out


def attend(feats, maps):
    return {name: feats[name] * maps[name] for name in feats}


torch.manual_seed(0)
levels = ["p3", "p4", "p5"]
feats = {name: torch.randn(2, 8, 16 // 2**i, 16 // 2**i, requires_grad=True) for i, name in enumerate(levels)}
att = SpatialAttention(levels)
maps = rescale(att(feats), {"p3": 1.0, "p4": 0.5, "p5": 0.25})
loss = sum(v.pow(2).mean() for v in attend(feats, maps).values())
loss.backward()
print(loss.item())
