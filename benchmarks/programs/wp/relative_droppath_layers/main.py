# source: https://github.com/huggingface/pytorch-image-models/blob/84178fca60fca9d35c0ea5ec08af2e88bf058559/timm/layers/drop.py @ 84178fca60fca9d35c0ea5ec08af2e88bf058559
# expect: AL101 at layers/drop.py:10
# torch: raises RuntimeError "modified by an inplace operation"
import torch
from torch import nn

from layers import Mlp


class MixerBlock(nn.Module):
    def __init__(self, dim, drop_path=0.3):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mlp = Mlp(dim, 2 * dim, drop_path=drop_path)

    def forward(self, x):
        return x + self.mlp(self.norm(x))


def main():
    torch.manual_seed(0)
    model = nn.Sequential(MixerBlock(8), MixerBlock(8))
    model.train()
    model(torch.randn(6, 8)).pow(2).mean().backward()


if __name__ == "__main__":
    main()
