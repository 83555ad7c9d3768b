# source: https://github.com/Lightning-AI/pytorch-lightning/blob/2047723b1bea457428f497e8a9c17ce57cff5fec/src/lightning/pytorch/core/module.py @ 2047723b1bea457428f497e8a9c17ce57cff5fec
# expect: AL101 at module.py:20
# torch: raises RuntimeError "modified by an inplace operation"
import torch

from module import DistillModule
from trainer import MiniTrainer


def make_data(batches=2):
    g = torch.Generator().manual_seed(0)
    return [(torch.randn(6, 5, generator=g), torch.randint(0, 3, (6,), generator=g))
            for _ in range(batches)]


def main():
    torch.manual_seed(0)
    MiniTrainer(max_epochs=1).fit(DistillModule(), make_data())


if __name__ == "__main__":
    main()
