# source: https://github.com/pytorch/examples/blob/1c16b6c4b4e30902b4fcdbd4d77ed19c60e4b36d/reinforcement_learning/actor_critic.py @ 1c16b6c4b4e30902b4fcdbd4d77ed19c60e4b36d
# expect: none
# torch: ok
import torch
import torch.nn.functional as F
from torch import nn


class Policy(nn.Module):
    def __init__(self, n_obs=4, n_actions=2):
        super().__init__()
        self.affine1 = nn.Linear(n_obs, 32)
        self.action_head = nn.Linear(32, n_actions)
        self.value_head = nn.Linear(32, 1)

    @staticmethod
    def _floor_probs(probs, eps=1e-3):
        probs = probs.clamp(min=eps)
        return probs

    def forward(self, x):
        h = F.relu(self.affine1(x))
        probs = F.softmax(self.action_head(h), dim=-1)
        return self._floor_probs(probs), self.value_head(h)


def finish_episode(model, states, actions, returns):
    probs, values = model(states)
    log_probs = probs.gather(1, actions[:, None]).log().squeeze(1)
    advantage = returns - values.squeeze(1).detach()
    loss = -(log_probs * advantage).sum() + F.smooth_l1_loss(values.squeeze(1), returns)
    loss.backward()


torch.manual_seed(0)
finish_episode(Policy(), torch.randn(5, 4), torch.randint(0, 2, (5,)), torch.randn(5))
