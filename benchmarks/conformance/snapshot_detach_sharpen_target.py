# source: user report pattern: MixMatch/UDA-style sharpening of a detached prediction used as a pseudo-label; softmax saved its result for backward
# expect: AL104 at line 12
# torch: raises RuntimeError "modified by an inplace operation"
import torch
from torch import nn

torch.manual_seed(0)
net = nn.Linear(4, 3)
x = torch.randn(8, 4)
probs = torch.softmax(net(x), dim=1)
target = probs.detach()
target.pow_(2)
target.div_(target.sum(dim=1, keepdim=True))
loss = -(target * probs.log()).sum(dim=1).mean()
loss.backward()
