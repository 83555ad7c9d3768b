# source: user report pattern: logging each micro-batch's gradient during gradient accumulation by keeping p.grad; the next backward() accumulates into that same tensor in place
# expect: AL207 at line 11
# torch: wrong "the second micro-batch's gradient comes out as zero"
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
micro_batches = [torch.randn(4, 3), torch.randn(4, 3)]
model(micro_batches[0]).pow(2).mean().backward()
first = model.weight.grad
model(micro_batches[1]).pow(2).mean().backward()
second = model.weight.grad - first
if second.abs().sum().item() == 0.0:
    raise SystemExit(1)
