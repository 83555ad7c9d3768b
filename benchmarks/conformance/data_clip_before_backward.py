# source: user report pattern: WGAN weight clipping moved between the critic's forward and backward pass (on where the clip belongs: https://github.com/martinarjovsky/WassersteinGAN/issues/50)
# expect: AL103 at line 16
# torch: wrong "the first layer's gradient went through the clipped second-layer weights"
import copy

import torch
from torch import nn

torch.manual_seed(0)
critic = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
reference = copy.deepcopy(critic)
x = torch.randn(16, 4)
score = critic(x).mean()
for p in critic.parameters():
    # Keep the critic Lipschitz.
    p.data.clamp_(-0.01, 0.01)
score.backward()
reference(x).mean().backward()
if not torch.allclose(critic[0].weight.grad, reference[0].weight.grad):
    raise SystemExit(1)
