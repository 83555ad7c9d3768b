import torch
from torch import nn


@torch.no_grad()
def rescale_residual_branches(module, factor):
    """Shrink the last layer of every residual branch, as deep-net init schemes do."""
    for name, child in module.named_children():
        if name == "branch" and isinstance(child, nn.Sequential):
            last = child[-1]
            last.weight.mul_(factor)
        else:
            rescale_residual_branches(child, factor)
