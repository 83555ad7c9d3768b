import torch
from torch import nn

# A small VGG-style feature stack: two conv pairs, each conv followed by an in-place ReLU.
CFG = [8, 8, "M", 16, 16]


def make_features(cfg, in_channels=3):
    layers = []
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
        else:
            conv = nn.Conv2d(in_channels, v, kernel_size=3, padding=1)
            layers += [conv, nn.ReLU(inplace=True)]
            in_channels = v
    return nn.Sequential(*layers)


def vgg_features(seed=0):
    torch.manual_seed(seed)
    features = make_features(CFG)
    for p in features.parameters():
        p.requires_grad_(False)
    return features
