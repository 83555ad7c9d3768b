# source: https://github.com/pytorch/examples/blob/f15fac72e01158bcb704dded7c7e511f7a712a5f/mnist/main.py @ f15fac72e01158bcb704dded7c7e511f7a712a5f
# expect: none
# torch: ok
import torch

from models import Net
from train import train


def synthetic_loader(batches=2, size=8):
    g = torch.Generator().manual_seed(1)
    for _ in range(batches):
        yield torch.randn(size, 1, 8, 8, generator=g), torch.randint(0, 10, (size,), generator=g)


def main():
    torch.manual_seed(0)
    model = Net()
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    train(model, optimizer, synthetic_loader(), weight_decay=1e-2)


if __name__ == "__main__":
    main()
