# source: https://github.com/pytorch/examples/blob/2f5815e164db37800dbfac93fc3783233f7bef6b/reinforcement_learning/reinforce.py @ 2f5815e164db37800dbfac93fc3783233f7bef6b
# expect: none
# torch: ok
import torch
from torch import nn

EPS = 1e-6


def standardize(returns):
    return (returns - returns.mean()) / (returns.std() + EPS)


def discounted_returns(rewards, gamma=0.99):
    out, running = [], 0.0
    for r in reversed(rewards):
        running = r + gamma * running
        out.insert(0, running)
    return torch.tensor(out)


def policy_loss(log_probs, returns):
    advantages = standardize(returns)
    return -(torch.stack(log_probs) * advantages).sum()


def finish_episode(policy, rewards):
    returns = discounted_returns(rewards)
    log_probs = [torch.log_softmax(policy(torch.ones(3)), -1)[0] for _ in rewards]
    policy_loss(log_probs, returns).backward()
    return returns[0].item()


torch.manual_seed(0)
logged = finish_episode(nn.Linear(3, 2), [1.0, 1.0, 1.0, 1.0])
if abs(logged - 3.94) > 0.01:
    raise SystemExit(1)
