from torch import nn

from layers import PreActStage


class DeepSupervisedNet(nn.Module):
    """A stem, an auxiliary classifier on the stem features, and a main stage."""

    def __init__(self, num_classes=10):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.aux = nn.Sequential(nn.Conv2d(16, num_classes, 1), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.stage = PreActStage.from_config({"in_channels": 16, "channels": [32, 32]})
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, num_classes))

    def forward(self, x):
        feats = self.stem(x)
        aux = self.aux(feats)
        return self.head(self.stage(feats)), aux
