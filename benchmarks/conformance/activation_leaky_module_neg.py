# source: pytorch/pytorch test/test_nn.py TestNNDeviceType.test_leaky_relu_inplace_with_neg_slope (module form)
# expect: AL105 at line 7
# torch: raises RuntimeError "negative slope"
import torch
from torch import nn

net = nn.Sequential(nn.Linear(4, 4), nn.LeakyReLU(-0.5, inplace=True))
net(torch.randn(3, 4)).sum().backward()
