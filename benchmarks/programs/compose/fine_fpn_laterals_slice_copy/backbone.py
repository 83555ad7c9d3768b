from torch import nn


class PyramidBackbone(nn.Module):
    """Stages of equal width; each ends with a ReLU (out of place, it saves its output)."""

    def __init__(self, width=16, num_stages=3):
        super().__init__()
        self.stem = nn.Conv2d(3, width, 3, padding=1)
        self.stages = nn.ModuleList(
            nn.Sequential(nn.Conv2d(width, width, 3, stride=2, padding=1), nn.BatchNorm2d(width), nn.ReLU())
            for _ in range(num_stages)
        )

    def forward(self, x):
        x = self.stem(x)
        features = []
        for stage in self.stages:
            x = stage(x)
            features.append(x)
        return features
