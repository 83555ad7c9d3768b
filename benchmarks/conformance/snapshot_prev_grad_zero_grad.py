# source: https://github.com/pytorch/pytorch/pull/92731 (zero_grad(set_to_none=False) zeroes the existing .grad tensors in place), here the previous step's gradient kept to measure gradient agreement
# expect: AL207 at line 12
# torch: wrong "the gradient agreement is trivially 1"
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x1, x2 = torch.randn(8, 3), torch.randn(8, 3) * 3.0
model(x1).pow(2).mean().backward()
prev = model.weight.grad
opt.zero_grad(set_to_none=False)
model(x2).pow(2).mean().backward()
agreement = nn.functional.cosine_similarity(prev.flatten(), model.weight.grad.flatten(), dim=0)
if agreement.item() > 0.9999:
    raise SystemExit(1)
