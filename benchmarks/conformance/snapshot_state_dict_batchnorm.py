# source: https://joneswong.github.io/daily/python/pytorch/2022/03/16/pytorch-mistakes-people-ignored.html (state_dict() holds references), here moved by batch-norm running statistics
# expect: AL207 at line 9
# torch: wrong "the best checkpoint's running mean followed training"
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))
best = dict(model.state_dict())
frozen_mean = best["1.running_mean"].clone()
model.train()
model(torch.randn(16, 4) + 3.0)
if not torch.equal(best["1.running_mean"], frozen_mean):
    raise SystemExit(1)
