# source: pytorch/pytorch test/test_nn.py TestNNDeviceType.test_elu_inplace_with_neg_alpha (an in-place ELU runs its backward from its result when alpha is not negative), the same factory with alpha 1.0
# expect: none
# torch: ok
import torch
from torch import nn


def mlp_block(dim, alpha):
    return nn.Sequential(nn.Linear(dim, dim), nn.ELU(alpha=alpha, inplace=True))


class Regressor(nn.Module):
    def __init__(self, dim):
        super().__init__()
        # The usual ELU, in place after each linear layer.
        self.body = nn.Sequential(mlp_block(dim, 1.0), mlp_block(dim, 1.0))
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
