# source: https://github.com/martinarjovsky/WassersteinGAN/issues/50 (where the critic's weight clipping belongs), here written through p.detach() and moved between the critic's forward and backward; pytorch/pytorch test/test_autograd.py TestAutograd.test_detach_then_inplace_raises_in_autograd
# expect: AL104 at line 28
# torch: raises RuntimeError "modified by an inplace operation"
import torch
from torch import nn


def make_critic():
    return nn.Sequential(nn.Linear(4, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))


def make_generator():
    return nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 4))


torch.manual_seed(0)
critic, generator = make_critic(), make_generator()
opt_c = torch.optim.RMSprop(critic.parameters(), lr=5e-5)
clip = 0.01
for step in range(3):
    real = torch.randn(32, 4) + 1.0
    with torch.no_grad():
        fake = generator(torch.randn(32, 2))
    loss_c = critic(fake).mean() - critic(real).mean()
    opt_c.zero_grad()
    # Keep the critic Lipschitz.
    for p in critic.parameters():
        p.detach().clamp_(-clip, clip)
    loss_c.backward()
    opt_c.step()
