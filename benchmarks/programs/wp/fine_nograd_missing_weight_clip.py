# source: https://github.com/pytorch/examples/blob/13caa078cd69d74ffb447a9eda09f0a81b809480/dcgan/main.py @ 13caa078cd69d74ffb447a9eda09f0a81b809480
# expect: none
# torch: ok
import torch
from torch import nn


class Critic(nn.Module):
    def __init__(self, nz=8):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(nz, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))

    def forward(self, x):
        return self.main(x).view(-1)


@torch.no_grad()
def clip_weights(model, limit=0.01):
    # WGAN keeps the critic Lipschitz by clamping every weight after its step
    for p in model.parameters():
        p.clamp_(-limit, limit)


def critic_step(critic, opt, real, fake):
    opt.zero_grad()
    loss = critic(fake).mean() - critic(real).mean()
    loss.backward()
    opt.step()
    clip_weights(critic)
    return loss.item()


torch.manual_seed(0)
critic = Critic()
opt = torch.optim.RMSprop(critic.parameters(), lr=5e-5)
critic_step(critic, opt, torch.randn(4, 8), torch.randn(4, 8))
