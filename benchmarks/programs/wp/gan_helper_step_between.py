# source: https://github.com/pytorch/examples/blob/13caa078cd69d74ffb447a9eda09f0a81b809480/dcgan/main.py @ 13caa078cd69d74ffb447a9eda09f0a81b809480
# expect: AL101 at line 21
# torch: raises RuntimeError "modified by an inplace operation"
import torch
from torch import nn

criterion = nn.BCEWithLogitsLoss()


def make_models(nz=4):
    netG = nn.Sequential(nn.Linear(nz, 16), nn.ReLU(), nn.Linear(16, 8))
    netD = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
    return netG, netD


def update_discriminator(netD, optD, real, fake):
    optD.zero_grad()
    loss = criterion(netD(real), torch.ones(real.shape[0], 1))
    loss = loss + criterion(netD(fake.detach()), torch.zeros(fake.shape[0], 1))
    loss.backward()
    optD.step()


def train_iteration(netG, netD, optG, optD, real, nz=4):
    fake = netG(torch.randn(real.shape[0], nz))
    output = netD(fake)
    errG = criterion(output, torch.ones(real.shape[0], 1))
    update_discriminator(netD, optD, real, fake)
    optG.zero_grad()
    errG.backward()
    optG.step()


torch.manual_seed(0)
G, D = make_models()
train_iteration(G, D, torch.optim.Adam(G.parameters()), torch.optim.Adam(D.parameters()),
                torch.randn(5, 8))
