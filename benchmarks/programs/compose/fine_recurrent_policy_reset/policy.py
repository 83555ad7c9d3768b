import torch
from torch import nn


class RecurrentPolicy(nn.Module):
    def __init__(self, obs_dim, hidden, num_actions):
        super().__init__()
        self.ih = nn.Linear(obs_dim, hidden)
        self.hh = nn.Linear(hidden, hidden)
        self.pi = nn.Linear(hidden, num_actions)
        self.hidden = hidden

    def initial_state(self, batch):
        return torch.zeros(batch, self.hidden)

    def forward(self, obs, h):
        h = torch.tanh(self.ih(obs) + self.hh(h))
        return self.pi(h), h
