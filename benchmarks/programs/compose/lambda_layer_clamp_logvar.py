# source: https://github.com/huggingface/pytorch-image-models/blob/aa4b5850c1543fa488abf260f18390eda46cf85d/timm/models/vision_transformer.py @ aa4b5850c1543fa488abf260f18390eda46cf85d
# expect: AL101 at line 32
# torch: raises RuntimeError "modified by an inplace operation"
# A Lambda layer in a Sequential clamps the std in place; exp saved its result for backward.
import torch
from torch import nn


class Lambda(nn.Module):
    """Wraps a function as a layer, so it can sit in an nn.Sequential."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


class Exp(nn.Module):
    def forward(self, x):
        return torch.exp(x)


class GaussianPolicy(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.mu = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, act_dim))
        self.std = nn.Sequential(
            nn.Linear(obs_dim, act_dim),
            Exp(),
            Lambda(lambda s: s.clamp_(1e-3, 10.0)),
        )

    def forward(self, obs):
        return torch.distributions.Normal(self.mu(obs), self.std(obs))


torch.manual_seed(0)
policy = GaussianPolicy(4, 2)
obs, actions, adv = torch.randn(16, 4), torch.randn(16, 2), torch.randn(16)
loss = -(policy(obs).log_prob(actions).sum(-1) * adv).mean()
loss.backward()
print(loss.item())
