# source: pytorch/pytorch test/test_view_ops.py TestViewOps.test_basic_indexing_slice_view (a slice is a view), here new embedding rows "shaped like" the pretrained ones, initialised with nn.init.zeros_
# expect: AL201 at line 10
# torch: wrong "the pretrained rows were zeroed"
import torch
from torch import nn

torch.manual_seed(0)
pretrained = torch.randn(4, 3)
extra = pretrained[:2]
nn.init.zeros_(extra)
table = torch.cat([pretrained, extra])
if table[:2].abs().sum().item() == 0.0:
    raise SystemExit(1)
