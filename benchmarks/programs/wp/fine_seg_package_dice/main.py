# source: https://github.com/facebookresearch/detectron2/blob/a08ed1019b792cea09957df340978be7f669f1de/detectron2/layers/losses.py @ a08ed1019b792cea09957df340978be7f669f1de
# expect: none
# torch: ok
import torch

from seg import SegHead, dice_loss


def train_step(model: SegHead, features: torch.Tensor, masks: torch.Tensor) -> float:
    probs = model(features)
    loss = dice_loss(probs, masks)
    loss.backward()
    return loss.item()


def main() -> None:
    torch.manual_seed(0)
    model = SegHead(channels=4)
    masks = (torch.rand(2, 1, 6, 6) > 0.5).float()
    train_step(model, torch.randn(2, 4, 6, 6), masks)


if __name__ == "__main__":
    main()
