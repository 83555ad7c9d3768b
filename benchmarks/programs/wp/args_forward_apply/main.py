# source: https://github.com/pytorch/examples/blob/493da9304e56ff5160f78d01a54992db35df2a98/imagenet/main.py @ 493da9304e56ff5160f78d01a54992db35df2a98
# expect: AL208 at ops.py:5
# torch: wrong "the evaluation copy of the batch received the training noise"
import torch

from ops import gaussian_noise
from runner import run_timed


def prepare(images):
    train_view = run_timed(gaussian_noise, images, std=0.5)
    eval_view = images
    return train_view, eval_view


def main():
    torch.manual_seed(0)
    batch = torch.zeros(4, 3, 6, 6)
    train_view, eval_view = prepare(batch)
    if eval_view.abs().sum().item() > 0:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
