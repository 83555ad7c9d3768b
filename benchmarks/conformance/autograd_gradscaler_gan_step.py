# source: https://github.com/Lornatang/SRGAN-PyTorch/issues/28 (GradScaler: the discriminator's step runs before the generator's backward)
# expect: AL101 at line 19
# torch: raises RuntimeError "modified by an inplace operation"
import torch
from torch import nn

torch.manual_seed(0)
generator = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 8))
critic = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
opt_g = torch.optim.Adam(generator.parameters(), lr=1e-4)
opt_d = torch.optim.Adam(critic.parameters(), lr=1e-4)
scaler = torch.amp.GradScaler("cpu")
real, noise = torch.randn(16, 8), torch.randn(16, 8)

fake = generator(noise)
d_loss = critic(fake.detach()).mean() - critic(real).mean()
g_loss = -critic(fake).mean()
scaler.scale(d_loss).backward()
scaler.step(opt_d)
scaler.scale(g_loss).backward()
scaler.step(opt_g)
scaler.update()
