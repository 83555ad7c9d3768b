# source: https://github.com/facebookresearch/detectron2/blob/d0d538a439f5fbbd2eb9407e5f08fc15a7fe9af9/detectron2/layers/batch_norm.py @ d0d538a439f5fbbd2eb9407e5f08fc15a7fe9af9
# expect: AL101 at models.py:20
# torch: raises RuntimeError "modified by an inplace operation"
import torch

from models import Classifier
from train import train_epoch


def make_batches(n=3, size=8):
    g = torch.Generator().manual_seed(0)
    return [(torch.randn(size, 10, generator=g), torch.randint(0, 3, (size,), generator=g))
            for _ in range(n)]


def main():
    torch.manual_seed(0)
    model = Classifier()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_epoch(model, optimizer, make_batches())


if __name__ == "__main__":
    main()
