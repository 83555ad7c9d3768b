# source: https://github.com/pytorch/examples/blob/493da9304e56ff5160f78d01a54992db35df2a98/imagenet/main.py @ 493da9304e56ff5160f78d01a54992db35df2a98
# expect: none
# torch: ok
import torch

from augment import *


def two_views(images):
    """A clean and an augmented view of one batch, for a consistency loss."""
    augmented = brightness(cutout(images))
    return images, augmented


def main():
    torch.manual_seed(0)
    batch = torch.rand(4, 3, 8, 8) + 0.5
    clean, augmented = two_views(batch)
    if (clean == 0).any():
        raise SystemExit(1)


if __name__ == "__main__":
    main()
