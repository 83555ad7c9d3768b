from torch import nn


class PreActStage(nn.Sequential):
    """activation -> conv -> norm, repeated; built from a config dict."""

    @classmethod
    def from_config(cls, cfg):
        layers = []
        c_in = cfg["in_channels"]
        for c_out in cfg["channels"]:
            layers.append(nn.ReLU(inplace=True))
            layers.append(nn.Conv2d(c_in, c_out, 3, padding=1, bias=False))
            layers.append(nn.BatchNorm2d(c_out))
            c_in = c_out
        return cls(*layers)
