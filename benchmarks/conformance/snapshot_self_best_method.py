# source: https://github.com/WenjieDu/PyPOTS/issues/667 (self.best_model_dict = self.model.state_dict() kept being updated)
# expect: AL207 at line 21
# torch: wrong "the best checkpoint followed later training"
import torch
from torch import nn


class Trainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)
        self.best = None

    def step(self, x, y):
        loss = nn.functional.mse_loss(self.model(x), y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()

    def checkpoint(self):
        self.best = self.model.state_dict()

    def best_weight(self):
        return self.best["weight"]


torch.manual_seed(0)
trainer = Trainer(nn.Linear(3, 1))
x, y = torch.randn(16, 3), torch.randn(16, 1)
trainer.checkpoint()
for _ in range(3):
    trainer.step(x, y)
if torch.equal(trainer.best_weight(), trainer.model.weight):
    raise SystemExit(1)
