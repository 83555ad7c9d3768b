# source: https://github.com/huggingface/pytorch-image-models/blob/2f3fed43b8888b07585242bf591a1d6cb9118b7c/timm/layers/layer_scale.py @ 2f3fed43b8888b07585242bf591a1d6cb9118b7c
# expect: none
# torch: ok
import torch
from torch import nn


class PatchEmbed(nn.Module):
    def __init__(self, dim=8, patches=4):
        super().__init__()
        self.proj = nn.Linear(12, dim)
        self.pos_embed = nn.Parameter(torch.randn(1, patches + 1, dim) * 0.02)

    @property
    def cls_pos(self):
        return self.pos_embed[:, :1]

    def forward(self, x):
        return self.proj(x) + self.pos_embed[:, 1:]


@torch.no_grad()
def reset_class_position(model):
    # the class token carries no position
    model.cls_pos.zero_()


def build():
    model = PatchEmbed()
    reset_class_position(model)
    return model


torch.manual_seed(0)
model = build()
model(torch.randn(2, 4, 12)).sum().backward()
