# source: https://github.com/pytorch/examples/blob/bec1ed03b2abc9d8144b2b76a5b773c51313edb5/fast_neural_style/neural_style/neural_style.py @ bec1ed03b2abc9d8144b2b76a5b773c51313edb5
# expect: AL208 at utils.py:8
# torch: wrong "the stylised batch kept for the total-variation loss was divided by 255"
import torch

from transformer_net import TransformerNet
from utils import normalize_batch, total_variation


def train_batch(transformer, vgg, x, tv_weight=1e-3):
    y = transformer(x)
    features_y = vgg(normalize_batch(y))
    features_x = vgg(normalize_batch(x.clone()))
    content_loss = (features_y - features_x).pow(2).mean()
    tv_loss = tv_weight * total_variation(y)
    return content_loss + tv_loss, y


def main():
    torch.manual_seed(0)
    transformer = TransformerNet()
    vgg = torch.nn.Conv2d(3, 4, 3)
    x = torch.rand(2, 3, 8, 8) * 255.0
    loss, y = train_batch(transformer, vgg, x)
    loss.backward()
    if y.abs().max().item() < 2.0:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
