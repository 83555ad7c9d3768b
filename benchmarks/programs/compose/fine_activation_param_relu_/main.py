# source: https://github.com/facebookresearch/detectron2/blob/02b5c4e295e990042a714712c21dc79b731e8833/detectron2/layers/wrappers.py @ 02b5c4e295e990042a714712c21dc79b731e8833
# expect: none
# torch: ok
# The builder passes torch.relu.
import torch
import torch.nn.functional as F

from models import build_trunk


def reference(trunk, x):
    for blk in trunk:
        x = x + blk.fc2(F.relu(blk.fc1(F.relu(x))))
    return x


torch.manual_seed(0)
trunk = build_trunk(16, depth=2)
x = torch.randn(4, 16)
out = trunk(x.clone())
out.pow(2).mean().backward()
with torch.no_grad():
    expected = reference(trunk, x)
if not torch.allclose(out, expected):
    raise SystemExit(1)
