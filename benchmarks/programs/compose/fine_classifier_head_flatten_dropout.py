# source: https://github.com/huggingface/pytorch-image-models/blob/aa4b5850c1543fa488abf260f18390eda46cf85d/timm/layers/classifier.py @ aa4b5850c1543fa488abf260f18390eda46cf85d
# expect: none
# torch: ok
# The head's dropout runs out of place.
import torch
from torch import nn


def make_head(num_features, num_classes, drop_rate):
    layers = [nn.Flatten(1)]
    if drop_rate > 0:
        layers.append(nn.Dropout(drop_rate))
    layers.append(nn.Linear(num_features, num_classes))
    return nn.Sequential(*layers)


class EmbeddingNet(nn.Module):
    """Classifier that also returns its pooled embedding for a metric-learning loss."""

    def __init__(self, num_classes=10, drop_rate=0.5):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(inplace=True))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = make_head(16, num_classes, drop_rate)

    def forward(self, x):
        pooled = self.pool(self.features(x))
        logits = self.head(pooled)
        return logits, pooled.flatten(1)


torch.manual_seed(0)
model = EmbeddingNet()
images = torch.randn(8, 3, 16, 16) + 2.0
logits, embedding = model(images)
loss = nn.functional.cross_entropy(logits, torch.randint(0, 10, (8,))) + embedding.pow(2).mean()
loss.backward()
# the pooled ReLU features of these shifted images are all positive; zeros can only come from dropout
if (embedding == 0).any():
    raise SystemExit(1)
