# source: user report pattern: best = model.state_dict() kept as a copy
# expect: AL207 at line 8
# torch: wrong "the saved best weights followed training"
import torch
from torch import nn

model = nn.Linear(2, 1)
best = model.state_dict()
before = best["weight"].clone()
with torch.no_grad():
    model.weight.add_(1.0)
if not torch.equal(best["weight"], before):
    raise SystemExit(1)
