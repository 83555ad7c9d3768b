import torch
from torch import Tensor


def _flatten(t: Tensor) -> Tensor:
    return t.reshape(t.shape[0], -1)


def dice_loss(probs: Tensor, target: Tensor, smooth: float = 1.0) -> Tensor:
    probs = _flatten(probs)
    target = _flatten(target)
    intersection = (probs * target).sum(dim=1)
    union = probs.pow(2).sum(dim=1) + target.pow(2).sum(dim=1)
    return (1 - (2 * intersection + smooth) / (union + smooth)).mean()
