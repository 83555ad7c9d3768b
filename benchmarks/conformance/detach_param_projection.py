# source: pytorch/pytorch test/test_autograd.py TestAutograd.test_detach_then_inplace_raises_in_autograd
# expect: AL104 at line 12
# torch: raises RuntimeError "modified by an inplace operation"
import torch
from torch import nn

torch.manual_seed(0)
mixing = nn.Parameter(torch.randn(3))
signals = torch.randn(3, 5)
loss = ((mixing ** 2).unsqueeze(1) * signals).sum()
# Project the mixing weights back onto the non-negative orthant.
mixing.detach().clamp_(min=0.0)
loss.backward()
