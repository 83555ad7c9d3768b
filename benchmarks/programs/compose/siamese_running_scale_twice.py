# source: https://github.com/pytorch/examples/blob/77f55b912142e11fcfdf5b530231fb9c52f181e8/siamese_network/main.py @ 77f55b912142e11fcfdf5b530231fb9c52f181e8
# expect: AL101 at line 20
# torch: raises RuntimeError "modified by an inplace operation"
# A custom normaliser multiplies by its running inverse-RMS buffer (mul saves it) and then updates the buffer in place; the shared encoder runs twice before backward.
import torch
import torch.nn.functional as F
from torch import nn


class RunningRMSNorm(nn.Module):
    """Scales features by a running estimate of their inverse RMS."""

    def __init__(self, dim, momentum=0.1):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("inv_rms", torch.ones(dim))

    def _update(self, x):
        rms = x.detach().pow(2).mean(dim=0).sqrt()
        self.inv_rms.mul_(1 - self.momentum).add_(self.momentum / (rms + 1e-5))

    def forward(self, x):
        y = x * self.inv_rms
        if self.training:
            self._update(x)
        return y


class SiameseNet(nn.Module):
    def __init__(self, in_dim=20, dim=16):
        super().__init__()
        self.fc = nn.Linear(in_dim, dim)
        self.norm = RunningRMSNorm(dim)
        self.head = nn.Linear(dim, 1)

    def embed(self, x):
        return F.relu(self.norm(self.fc(x)))

    def forward(self, a, b):
        return self.head((self.embed(a) - self.embed(b)).abs()).squeeze(-1)


torch.manual_seed(0)
net = SiameseNet()
a, b, same = torch.randn(8, 20), torch.randn(8, 20), (torch.rand(8) > 0.5).float()
loss = F.binary_cross_entropy_with_logits(net(a, b), same)
loss.backward()
print(loss.item())
