# source: https://github.com/facebookresearch/detectron2/blob/02b5c4e295e990042a714712c21dc79b731e8833/detectron2/modeling/roi_heads/mask_head.py @ 02b5c4e295e990042a714712c21dc79b731e8833
# expect: none
# torch: ok
# The hard masks are clones.
import torch
import torch.nn.functional as F

from models import MultiScaleSeg
from postprocess import binarize, soft_dice


def step(model, images, target):
    probs = model(images)
    hard = binarize(probs)
    loss = sum(soft_dice(p, F.avg_pool2d(target, s)) for p, s in zip(probs, model.scales))
    loss.backward()
    return loss.item(), [h.mean().item() for h in hard]


torch.manual_seed(0)
model = MultiScaleSeg()
print(step(model, torch.randn(2, 3, 16, 16), (torch.rand(2, 1, 16, 16) > 0.5).float()))
