# source: https://github.com/facebookresearch/detectron2/blob/02b5c4e295e990042a714712c21dc79b731e8833/detectron2/structures/boxes.py @ 02b5c4e295e990042a714712c21dc79b731e8833
# expect: AL208 at boxes.py:6
# torch: wrong "the caller's proposals were clipped too: none extends outside the image any more, and the visible fractions are all 1"
# A public clip function writes the caller's box tensor in place and returns it; the caller then compares clipped and original areas.
import torch

from proposals import filter_proposals

torch.manual_seed(0)
height, width = 32, 32
centers = torch.rand(50, 2) * 48 - 8
sizes = torch.rand(50, 2) * 16 + 4
proposals = torch.cat([centers - sizes / 2, centers + sizes / 2], dim=1)
kept, keep = filter_proposals(proposals, height, width)
print(f"{int(keep.sum())} of {len(keep)} proposals kept")
outside = (proposals[:, :2] < 0).any(dim=1) | (proposals[:, 2:] > width).any(dim=1)
if not bool(outside.any()):
    raise SystemExit(1)
