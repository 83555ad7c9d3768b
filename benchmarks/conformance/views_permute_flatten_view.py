# source: user report pattern: "view size is not compatible with input tensor's size and stride" after permuting to channels-last
# expect: AL202 at line 10
# torch: raises RuntimeError "view size is not compatible"
import torch
from torch import nn

torch.manual_seed(0)
conv = nn.Conv2d(3, 4, 3, padding=1)
fmap = conv(torch.randn(2, 3, 5, 5)).permute(0, 2, 3, 1)
flat = fmap.view(2, -1)
