# source: https://github.com/pytorch/examples/blob/77f55b912142e11fcfdf5b530231fb9c52f181e8/dcgan/main.py @ 77f55b912142e11fcfdf5b530231fb9c52f181e8
# expect: AL105 at models.py:20
# torch: raises RuntimeError "modified by an inplace operation"
# The discriminator's first layer is LeakyReLU(0.2, True) (inplace by position): it rewrites fake.detach(), which shares the generator's Tanh output that Tanh saved.
import torch
from torch import nn

from models import Discriminator, Generator, nz


def train_step(netG, netD, optG, optD, real, criterion):
    b = real.size(0)
    noise = torch.randn(b, nz, 1, 1)
    fake = netG(noise)
    netD.zero_grad()
    errD = criterion(netD(real), torch.ones(b)) + criterion(netD(fake.detach()), torch.zeros(b))
    errD.backward()
    optD.step()
    netG.zero_grad()
    errG = criterion(netD(fake), torch.ones(b))
    errG.backward()
    optG.step()
    return errD.item(), errG.item()


torch.manual_seed(0)
netG, netD = Generator(), Discriminator()
optG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
optD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
print(train_step(netG, netD, optG, optD, torch.rand(4, 3, 16, 16) * 2 - 1, nn.BCELoss()))
