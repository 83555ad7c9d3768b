# source: https://github.com/facebookresearch/detectron2/blob/02b5c4e295e990042a714712c21dc79b731e8833/detectron2/modeling/backbone/resnet.py @ 02b5c4e295e990042a714712c21dc79b731e8833
# expect: AL105 at stages.py:18
# torch: wrong "the res2 feature map handed to the neck has been rectified by res3's first in-place ReLU"
# Stages registered with add_module; the dict keeps res2's output, which res3's leading ReLU(inplace=True) then overwrites.
import torch
from torch import nn

from backbone import ResNetLite


class SimpleNeck(nn.Module):
    def __init__(self):
        super().__init__()
        self.lateral2 = nn.Conv2d(16, 8, 1)
        self.lateral3 = nn.Conv2d(32, 8, 1)

    def forward(self, feats):
        top = nn.functional.interpolate(self.lateral3(feats["res3"]), scale_factor=2.0)
        return self.lateral2(feats["res2"]) + top


torch.manual_seed(0)
backbone, neck = ResNetLite(), SimpleNeck()
feats = backbone(torch.randn(2, 3, 32, 32))
neck(feats).mean().backward()
# res2 ends with a BatchNorm in training mode: its output has negative values unless rectified
if feats["res2"].min() >= 0:
    raise SystemExit(1)
