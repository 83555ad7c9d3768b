# source: https://github.com/facebookresearch/detectron2/blob/910b796dd766bf466ed814ddc2d82ff06107df71/detectron2/modeling/box_regression.py @ 910b796dd766bf466ed814ddc2d82ff06107df71
# expect: AL101 at box_regression.py:13
# torch: raises RuntimeError "modified by an inplace operation"
import torch

from box_regression import BoxCoder
from head import BoxHead


def regression_step(head, coder, features, anchors, gt_sizes):
    deltas = head(features)
    sizes = coder.decode_sizes(deltas, anchors)
    loss = torch.nn.functional.smooth_l1_loss(sizes, gt_sizes)
    loss.backward()
    return loss.item()


def main():
    torch.manual_seed(0)
    anchors = torch.rand(5, 2) * 10 + 1
    regression_step(BoxHead(6), BoxCoder(max_size=8.0), torch.randn(5, 6), anchors, anchors)


if __name__ == "__main__":
    main()
