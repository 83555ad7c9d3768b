# source: https://github.com/pytorch/examples/blob/2b456e809fe249f2153616578c116e4b2954ca18/fast_neural_style/neural_style/utils.py @ 2b456e809fe249f2153616578c116e4b2954ca18
# expect: AL208 at line 12
# torch: wrong "the content images are divided by 255 a second time"
import torch
from torch import nn


def normalize_batch(batch):
    # ImageNet statistics, as the VGG feature extractor expects
    mean = batch.new_tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
    std = batch.new_tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
    batch = batch.div_(255.0)
    return (batch - mean) / std


class TinyTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3, padding=1)

    def forward(self, x):
        return self.conv(x) * 255.0


def train_step(model, vgg, x):
    features_x = vgg(normalize_batch(x))
    y = model(x / 255.0)
    features_y = vgg(normalize_batch(y))
    content_loss = (features_y - features_x).pow(2).mean()
    return content_loss, x


torch.manual_seed(0)
images = torch.rand(2, 3, 8, 8) * 255.0
peak = images.max().item()
loss, seen = train_step(TinyTransformer(), nn.Conv2d(3, 4, 3), images)
loss.backward()
if seen.max().item() < peak / 2:
    raise SystemExit(1)
