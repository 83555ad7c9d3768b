# source: https://github.com/huggingface/pytorch-image-models/blob/aa4b5850c1543fa488abf260f18390eda46cf85d/timm/utils/model.py @ aa4b5850c1543fa488abf260f18390eda46cf85d
# expect: none
# torch: ok
# The best state is a copy.deepcopy of it.
import copy

import torch
from torch import nn

from train import train_one_epoch
from utils import evaluate, get_state_dict

torch.manual_seed(0)
model = nn.Linear(6, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.5)
x, y = torch.randn(64, 6), torch.randn(64, 1)
x_val, y_val = torch.randn(32, 6), torch.randn(32, 1)
best_loss, best_state = float("inf"), None
for epoch in range(6):
    train_one_epoch(model, opt, x, y)
    val = evaluate(model, x_val, y_val)
    if val < best_loss:
        best_loss = val
        best_state = copy.deepcopy(get_state_dict(model))
model.load_state_dict(best_state)
if abs(evaluate(model, x_val, y_val) - best_loss) > 1e-6:
    raise SystemExit(1)
