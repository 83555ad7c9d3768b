# source: https://github.com/huggingface/pytorch-image-models/blob/aa4b5850c1543fa488abf260f18390eda46cf85d/timm/models/fasternet.py @ aa4b5850c1543fa488abf260f18390eda46cf85d
# expect: none
# torch: ok
# Trained with forward="split_cat", as the original intends (slicing is for inference only).
import torch
from torch import nn


class PartialConv3(nn.Module):
    def __init__(self, dim, n_div, forward="split_cat"):
        super().__init__()
        self.dim_conv3 = dim // n_div
        self.dim_untouched = dim - self.dim_conv3
        self.partial_conv3 = nn.Conv2d(self.dim_conv3, self.dim_conv3, 3, 1, 1, bias=False)
        if forward == "slicing":
            self.forward = self.forward_slicing
        elif forward == "split_cat":
            self.forward = self.forward_split_cat
        else:
            raise NotImplementedError(forward)

    def forward_slicing(self, x):
        x = x.clone()  # keeps the caller's tensor intact for the residual
        x[:, : self.dim_conv3, :, :] = self.partial_conv3(x[:, : self.dim_conv3, :, :])
        return x

    def forward_split_cat(self, x):
        x1, x2 = torch.split(x, [self.dim_conv3, self.dim_untouched], dim=1)
        return torch.cat((self.partial_conv3(x1), x2), 1)


class MLPBlock(nn.Module):
    def __init__(self, dim, forward):
        super().__init__()
        self.spatial_mixing = PartialConv3(dim, 4, forward)
        self.mlp = nn.Sequential(nn.Conv2d(dim, dim * 2, 1), nn.BatchNorm2d(dim * 2), nn.ReLU(), nn.Conv2d(dim * 2, dim, 1))

    def forward(self, x):
        shortcut = x
        return shortcut + self.mlp(self.spatial_mixing(x))


torch.manual_seed(0)
stem = nn.Conv2d(3, 16, 3, padding=1)
block = MLPBlock(16, forward="split_cat")
block(stem(torch.randn(2, 3, 8, 8))).mean().backward()
print(stem.weight.grad.norm())
