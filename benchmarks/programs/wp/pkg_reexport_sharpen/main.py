# source: https://github.com/facebookresearch/detectron2/blob/31542d62eabaef2cbce5092bf79287ecce2459ab/detectron2/layers/__init__.py @ 31542d62eabaef2cbce5092bf79287ecce2459ab
# expect: AL101 at nets/ops.py:3
# torch: raises RuntimeError "modified by an inplace operation"
import torch
import torch.nn.functional as F

from nets import AttentionPool


def evaluate_and_train(model, features, labels):
    model.train()
    logits = model(features)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    return loss.item()


def main():
    torch.manual_seed(0)
    model = AttentionPool(dim=6, classes=3)
    evaluate_and_train(model, torch.randn(4, 5, 6), torch.tensor([0, 1, 2, 0]))


if __name__ == "__main__":
    main()
