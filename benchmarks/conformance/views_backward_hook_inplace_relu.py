# source: https://github.com/pytorch/pytorch/issues/61519 (a full backward hook on a module that runs an in-place ReLU)
# expect: AL106 at line 12
# torch: raises RuntimeError "is a view and is being modified inplace"
import torch
from torch import nn

torch.manual_seed(0)
net = nn.Sequential(
    nn.Linear(3, 8),
    nn.ReLU(inplace=True),
    nn.Linear(8, 8),
    nn.ReLU(inplace=True),
)
grads = []
net[3].register_full_backward_hook(lambda module, g_in, g_out: grads.append(g_out[0]))
net(torch.randn(2, 3)).sum().backward()
