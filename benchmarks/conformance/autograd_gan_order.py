# source: user report pattern: GAN generator loss backward after the discriminator's step
# expect: AL101 at line 16
# torch: raises RuntimeError "modified by an inplace operation"
import torch
from torch import nn

gen = nn.Linear(4, 4)
disc = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
opt_g = torch.optim.SGD(gen.parameters(), lr=0.1)
opt_d = torch.optim.SGD(disc.parameters(), lr=0.1)
real = torch.randn(8, 4)
fake = gen(torch.randn(8, 4))
d_loss = disc(fake.detach()).mean() - disc(real).mean()
g_loss = -disc(fake).mean()
d_loss.backward()
opt_d.step()
g_loss.backward()
opt_g.step()
