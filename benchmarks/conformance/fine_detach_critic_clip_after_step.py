# source: https://github.com/martinarjovsky/WassersteinGAN/issues/50 (the critic's weights clipped after its optimizer step, as the WGAN algorithm does), written through p.detach()
# expect: none
# torch: ok
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
    loss_c.backward()
    opt_c.step()
    # Keep the critic Lipschitz.
    for p in critic.parameters():
        p.detach().clamp_(-clip, clip)
