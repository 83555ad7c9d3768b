# source: https://github.com/huggingface/pytorch-image-models/blob/aa4b5850c1543fa488abf260f18390eda46cf85d/timm/utils/model_ema.py @ aa4b5850c1543fa488abf260f18390eda46cf85d
# expect: AL207 at ema.py:10
# torch: wrong "the EMA weights are the live weights: the EMA module is the model itself"
# The EMA keeps the model object, not a copy; every optimizer step changes it and the EMA update averages the weights with themselves.
import torch
from torch import nn

from ema import ModelEma


def train(model, ema, steps=5):
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    for _ in range(steps):
        x, y = torch.randn(16, 4), torch.randn(16, 1)
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        ema.update(model)


torch.manual_seed(0)
model = nn.Linear(4, 1)
ema = ModelEma(model)
model.train()
train(model, ema)
if torch.equal(ema.module.weight, model.weight):
    raise SystemExit(1)
