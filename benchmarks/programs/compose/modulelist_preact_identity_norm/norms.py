from torch import nn


def get_norm(kind, dim):
    """Norm layer by name; "none" keeps the shape with an Identity so callers need no branch."""
    if kind == "bn":
        return nn.BatchNorm1d(dim)
    if kind == "ln":
        return nn.LayerNorm(dim)
    if kind == "none":
        return nn.Identity()
    raise ValueError(kind)
