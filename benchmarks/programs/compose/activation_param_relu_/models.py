import torch
from torch import nn

from layers import ResidualMLPBlock


def build_trunk(dim, depth):
    blocks = [ResidualMLPBlock(dim, activation=torch.relu_) for _ in range(depth)]
    return nn.Sequential(*blocks)
