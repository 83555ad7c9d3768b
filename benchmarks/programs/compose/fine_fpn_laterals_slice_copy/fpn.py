import torch.nn.functional as F


def top_down(features):
    """Top-down pathway without lateral convs: the backbone's widths already match."""
    laterals = features[:]
    for i in range(len(laterals) - 1, 0, -1):
        laterals[i - 1] = laterals[i - 1] + F.interpolate(laterals[i], size=laterals[i - 1].shape[-2:], mode="nearest")
    return laterals
