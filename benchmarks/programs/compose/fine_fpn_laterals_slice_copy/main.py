# source: https://github.com/facebookresearch/detectron2/blob/02b5c4e295e990042a714712c21dc79b731e8833/detectron2/modeling/backbone/fpn.py @ 02b5c4e295e990042a714712c21dc79b731e8833
# expect: none
# torch: ok
# The top-down sum makes new tensors.
import torch
from torch import nn

from backbone import PyramidBackbone
from fpn import top_down


class DenseHead(nn.Module):
    def __init__(self, width=16, num_classes=4):
        super().__init__()
        self.cls = nn.Conv2d(width, num_classes, 3, padding=1)

    def forward(self, pyramid):
        return [self.cls(p).mean(dim=(2, 3)) for p in pyramid]


torch.manual_seed(0)
backbone, head = PyramidBackbone(), DenseHead()
images, labels = torch.randn(2, 3, 32, 32), torch.tensor([1, 3])
logits = head(top_down(backbone(images)))
loss = sum(nn.functional.cross_entropy(level, labels) for level in logits)
loss.backward()
print(loss.item())
