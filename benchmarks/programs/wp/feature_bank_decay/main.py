# source: https://github.com/pytorch/examples/blob/cd01f93000a6679e768700dd29e417a1e5fd10e5/word_language_model/main.py @ cd01f93000a6679e768700dd29e417a1e5fd10e5
# expect: AL101 at bank.py:15
# torch: raises RuntimeError "modified by an inplace operation"
import torch

from bank import FeatureBank
from models import Encoder


def accumulate(model, bank, batches):
    """Sum a smoothness penalty over consecutive batches, then one backward for all."""
    total = 0.0
    for x in batches:
        feats = model(x)
        window = bank.push(feats)
        total = total + sum((f - feats).pow(2).mean() for f in window[:-1])
        bank.decay(window)
    total.backward()


def main():
    torch.manual_seed(0)
    accumulate(Encoder(5, 4), FeatureBank(size=3), [torch.randn(6, 5) for _ in range(3)])


if __name__ == "__main__":
    main()
