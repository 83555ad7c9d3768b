# source: https://github.com/huggingface/pytorch-image-models/blob/a50e53d41fa937c0baaa6e9318fde252e3e8b389/timm/layers/weight_init.py @ a50e53d41fa937c0baaa6e9318fde252e3e8b389
# expect: none
# torch: ok
import torch
from torch import nn

from init_utils import rescale_residual_branches


class ResidualBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.branch = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))

    def forward(self, x):
        return x + self.branch(x)


def build(depth=3, dim=8):
    model = nn.Sequential(*[ResidualBlock(dim) for _ in range(depth)])
    rescale_residual_branches(model, factor=depth ** -0.5)
    return model


def main():
    torch.manual_seed(0)
    build()(torch.randn(2, 8)).sum().backward()


if __name__ == "__main__":
    main()
