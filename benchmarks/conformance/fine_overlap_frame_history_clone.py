# source: https://github.com/stefanonardo/pytorch-esn/pull/9 (the fix for "single memory location": clone the source slice before the shifted assignment)
# expect: none
# torch: ok
import torch
from torch import nn


class FrameHistory:
    """The last `length` observations, oldest first: the policy's input."""

    def __init__(self, length, dim):
        self.frames = torch.zeros(length, dim)

    def push(self, observation):
        # Drop the oldest frame, append the new one.
        self.frames[:-1] = self.frames[1:].clone()
        self.frames[-1] = observation
        return self.frames.flatten()


torch.manual_seed(0)
policy = nn.Linear(4 * 3, 2)
history = FrameHistory(4, 3)
actions = []
with torch.no_grad():
    for step in range(5):
        actions.append(policy(history.push(torch.randn(3))).argmax().item())
