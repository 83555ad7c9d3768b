# source: https://github.com/huggingface/pytorch-image-models/blob/0173a139a2c66db3a41ebfe1d8ac4fb02483642e/timm/layers/norm_act.py @ 0173a139a2c66db3a41ebfe1d8ac4fb02483642e
# expect: none
# torch: ok
import torch

from models import SmoothedHead


def train_step(model, features, targets):
    probs = model(features)
    loss = torch.nn.functional.binary_cross_entropy(probs, targets)
    loss.backward()
    return loss.item()


def main():
    torch.manual_seed(0)
    head = SmoothedHead(dim=6, labels=3, smoothing=0.1)
    train_step(head, torch.randn(4, 6), torch.randint(0, 2, (4, 3)).float())


if __name__ == "__main__":
    main()
