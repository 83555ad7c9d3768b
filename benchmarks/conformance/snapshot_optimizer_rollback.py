# source: https://github.com/pytorch/pytorch/issues/196083 (Optimizer.state_dict() hands out the live momentum buffers, and load_state_dict keeps them: an in-process rollback restores nothing)
# expect: AL207 at line 20
# torch: wrong "after the rollback the momentum buffer is the current one, not the checkpoint's"
import copy

import torch
from torch import nn


class Checkpoint:
    """The last good model and optimizer state, for rolling back after a loss spike."""

    def __init__(self):
        self.model_state = None
        self.optim_state = None
        self.momentum = None

    def save(self, model, optimizer):
        self.model_state = copy.deepcopy(model.state_dict())
        self.optim_state = optimizer.state_dict()
        self.momentum = optimizer.state[model.weight]["momentum_buffer"].clone()

    def restore(self, model, optimizer):
        model.load_state_dict(self.model_state)
        optimizer.load_state_dict(self.optim_state)


torch.manual_seed(0)
model = nn.Linear(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
x, y = torch.randn(64, 8), torch.randn(64, 1)
good = Checkpoint()
for step in range(6):
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step == 2:
        good.save(model, opt)
good.restore(model, opt)  # as if step 5 had diverged
if not torch.equal(opt.state[model.weight]["momentum_buffer"], good.momentum):
    raise SystemExit(1)
