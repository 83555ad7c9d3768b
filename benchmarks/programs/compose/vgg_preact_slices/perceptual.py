import torch
from torch import nn


class PreActivationFeatures(nn.Module):
    """Features before activation (conv1_2, conv2_2), as perceptual losses for
    super-resolution use them: the slices end at a conv, not at its ReLU."""

    def __init__(self, features):
        super().__init__()
        self.slice1 = nn.Sequential()
        self.slice2 = nn.Sequential()
        for x in range(3):
            self.slice1.add_module(str(x), features[x])
        for x in range(3, 8):
            self.slice2.add_module(str(x), features[x])

    def forward(self, X):
        h = self.slice1(X)
        h_conv1_2 = h
        h = self.slice2(h)
        h_conv2_2 = h
        return h_conv1_2, h_conv2_2


def gram(y):
    b, c, hh, ww = y.shape
    f = y.reshape(b, c, hh * ww)
    return f.bmm(f.transpose(1, 2)) / (c * hh * ww)


def style_loss(extractor, output, target):
    loss = output.new_zeros(())
    for fo, ft in zip(extractor(output), extractor(target)):
        loss = loss + (gram(fo) - gram(ft)).pow(2).sum()
    return loss
