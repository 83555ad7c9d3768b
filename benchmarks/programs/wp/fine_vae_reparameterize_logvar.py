# source: https://github.com/pytorch/examples/blob/cd01f93000a6679e768700dd29e417a1e5fd10e5/vae/main.py @ cd01f93000a6679e768700dd29e417a1e5fd10e5
# expect: none
# torch: ok
import torch
import torch.nn.functional as F
from torch import nn


class VAE(nn.Module):
    def __init__(self, d=12, z=3):
        super().__init__()
        self.fc1 = nn.Linear(d, 8)
        self.fc21 = nn.Linear(8, z)
        self.fc22 = nn.Linear(8, z)
        self.fc3 = nn.Linear(z, d)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = logvar.mul(0.5).exp()
        return mu + torch.randn_like(std) * std

    def forward(self, x):
        mu, logvar = self.encode(x)
        raw = logvar.detach().clone()
        z = self.reparameterize(mu, logvar)
        return torch.sigmoid(self.fc3(z)), mu, logvar, raw


def loss_function(recon_x, x, mu, logvar):
    bce = F.binary_cross_entropy(recon_x, x, reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld


torch.manual_seed(0)
recon, mu, logvar, raw = VAE()(torch.rand(4, 12))
loss_function(recon, torch.rand(4, 12), mu, logvar).backward()
if not torch.allclose(logvar, raw):
    raise SystemExit(1)
