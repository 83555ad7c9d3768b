# source: https://github.com/pytorch/examples/blob/1c16b6c4b4e30902b4fcdbd4d77ed19c60e4b36d/reinforcement_learning/actor_critic.py @ 1c16b6c4b4e30902b4fcdbd4d77ed19c60e4b36d
# expect: none
# torch: ok
import torch
from torch import nn


def shrink(values, passes, factor=0.9):
    """Pull the value estimates toward zero, `passes` times."""
    if passes == 0:
        return values
    return shrink(values * factor, passes - 1, factor)


class Critic(nn.Module):
    def __init__(self, n_obs=4):
        super().__init__()
        self.body = nn.Linear(n_obs, 16)
        self.value = nn.Linear(16, 1)

    def forward(self, states):
        return torch.tanh(self.value(torch.relu(self.body(states)))).squeeze(-1)


def update(critic, states, returns):
    values = critic(states)
    values = shrink(values, passes=2)
    loss = (values - returns).pow(2).mean()
    loss.backward()


torch.manual_seed(0)
update(Critic(), torch.randn(6, 4), torch.randn(6))
