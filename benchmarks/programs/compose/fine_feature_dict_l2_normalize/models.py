from collections import OrderedDict

from torch import nn


class Encoder(nn.Module):
    def __init__(self, dims=(12, 32, 32)):
        super().__init__()
        layers = OrderedDict()
        for i, (d_in, d_out) in enumerate(zip(dims[:-1], dims[1:])):
            layers[f"fc{i}"] = nn.Linear(d_in, d_out)
            layers[f"relu{i}"] = nn.ReLU()
        self.body = nn.Sequential(layers)


def extract(encoder, x, keep=("relu0", "relu1")):
    """Intermediate activations by layer name, for a multi-level contrastive loss."""
    feats = {}
    for name, layer in encoder.body.named_children():
        x = layer(x)
        if name in keep:
            feats[name] = x
    return feats
