# source: https://github.com/pytorch/pytorch/blob/d4cc86dc3cf9b2b5f59d1b24af4c5e430f96ab7b/torch/nn/modules/module.py @ d4cc86dc3cf9b2b5f59d1b24af4c5e430f96ab7b
# expect: AL101 at hooks.py:6
# torch: raises RuntimeError "modified by an inplace operation"
import torch

from hooks import register_saturation_guard
from models import RecurrentEncoder


def train_step(model, tokens, target):
    out = model(tokens)
    loss = (out - target).pow(2).mean()
    loss.backward()
    return loss.item()


def main():
    torch.manual_seed(0)
    model = RecurrentEncoder(vocab=12, dim=6)
    handles = register_saturation_guard(model, limit=0.9)
    train_step(model, torch.randint(0, 12, (2, 5)), torch.randn(2, 6))
    for handle in handles:
        handle.remove()


if __name__ == "__main__":
    main()
