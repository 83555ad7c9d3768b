# source: https://github.com/pytorch/pytorch/issues/91894 (a frame buffer shifted by one slot with an assignment between overlapping slices); pytorch/pytorch test/test_torch.py TestTorchDeviceType.test_copy_mem_overlap (a partial overlap is refused)
# expect: AL203 at line 16
# torch: raises RuntimeError "unsupported operation"
import torch
from torch import nn


class FrameHistory:
    """The last `length` observations, oldest first: the policy's input."""

    def __init__(self, length, dim):
        self.frames = torch.zeros(length, dim)

    def push(self, observation):
        # Drop the oldest frame, append the new one.
        self.frames[:-1] = self.frames[1:]
        self.frames[-1] = observation
        return self.frames.flatten()


torch.manual_seed(0)
policy = nn.Linear(4 * 3, 2)
history = FrameHistory(4, 3)
actions = []
with torch.no_grad():
    for step in range(5):
        actions.append(policy(history.push(torch.randn(3))).argmax().item())
