import copy

import torch


def strong_view(batch, lam=0.7):
    """A strongly augmented copy of the batch: blend each image with a shuffled partner."""
    out = copy.copy(batch)
    images = out["image"]
    partner = images[torch.randperm(images.size(0))] * (1.0 - lam)
    images.mul_(lam).add_(partner)
    return out
