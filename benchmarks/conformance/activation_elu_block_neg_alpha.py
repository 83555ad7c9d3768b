# source: pytorch/pytorch test/test_nn.py TestNNDeviceType.test_elu_inplace_with_neg_alpha (an in-place ELU with a negative alpha cannot run its backward), here the module form built by a block factory
# expect: AL105 at line 9
# torch: raises RuntimeError "negative slope"
import torch
from torch import nn


def mlp_block(dim, alpha):
    return nn.Sequential(nn.Linear(dim, dim), nn.ELU(alpha=alpha, inplace=True))


class Regressor(nn.Module):
    def __init__(self, dim):
        super().__init__()
        # A negative alpha mirrors the negative branch (an "inverted" ELU being tried out).
        self.body = nn.Sequential(mlp_block(dim, -0.5), mlp_block(dim, -0.5))
        self.head = nn.Linear(dim, 1)

    def forward(self, x):
        return self.head(self.body(x))


torch.manual_seed(0)
model = Regressor(8)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loss = nn.functional.mse_loss(model(torch.randn(16, 8)), torch.randn(16, 1))
opt.zero_grad()
loss.backward()
opt.step()
