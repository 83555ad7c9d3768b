# source: https://github.com/huggingface/pytorch-image-models/blob/3591fe90bad4686b8d0e9b2cf300387dad665b5a/timm/layers/mlp.py @ 3591fe90bad4686b8d0e9b2cf300387dad665b5a
# expect: none
# torch: ok
import torch

from models import GatedMlp


def fit(model, inputs, targets, steps=2):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = (model(inputs) - targets).pow(2).mean()
        loss.backward()
        optimizer.step()


def main():
    torch.manual_seed(0)
    fit(GatedMlp(6, 12), torch.randn(5, 6), torch.randn(5, 6))


if __name__ == "__main__":
    main()
