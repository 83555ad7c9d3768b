# source: https://github.com/huggingface/pytorch-image-models/blob/aa4b5850c1543fa488abf260f18390eda46cf85d/timm/layers/mlp.py @ aa4b5850c1543fa488abf260f18390eda46cf85d
# expect: none
# torch: ok
# The appended ReLU runs out of place.
import torch
from torch import nn


def mlp_layers(dims, act_layer=nn.Tanh):
    layers = []
    for d_in, d_out in zip(dims[:-1], dims[1:]):
        layers.append(nn.Linear(d_in, d_out))
        layers.append(act_layer())
    return layers


class ValueHead(nn.Module):
    """A critic: a tanh MLP trunk, then a rectified feature fed to the value estimate."""

    def __init__(self, dims):
        super().__init__()
        trunk = mlp_layers(dims)
        self.net = nn.Sequential(*(trunk + [nn.ReLU()]))
        self.out = nn.Linear(dims[-1], 1)

    def forward(self, obs):
        return self.out(self.net(obs)).squeeze(-1)


def train_step(model, opt, obs, returns):
    value = model(obs)
    loss = (value - returns).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()


torch.manual_seed(0)
model = ValueHead([6, 16, 16])
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for _ in range(3):
    print(train_step(model, opt, torch.randn(32, 6), torch.randn(32)))
