# source: https://github.com/pytorch/examples/blob/77f55b912142e11fcfdf5b530231fb9c52f181e8/word_language_model/main.py @ 77f55b912142e11fcfdf5b530231fb9c52f181e8
# expect: none
# torch: ok
# The reset masks the state out of place.
import torch

from policy import RecurrentPolicy
from rollout import collect


def reinforce_loss(logps, returns):
    return -sum((lp * r).mean() for lp, r in zip(logps, returns))


torch.manual_seed(0)
policy = RecurrentPolicy(obs_dim=5, hidden=16, num_actions=3)
opt = torch.optim.Adam(policy.parameters(), lr=1e-3)
T, B = 4, 6
env_obs = [torch.randn(B, 5) for _ in range(T)]
env_done = [(torch.rand(B) < 0.3).float() for _ in range(T)]
returns = [torch.randn(B) for _ in range(T)]
loss = reinforce_loss(collect(policy, env_obs, env_done), returns)
opt.zero_grad()
loss.backward()
opt.step()
print(loss.item())
