# source: user report pattern: temporal ensembling accumulates its target in place before the consistency loss that read it is backpropagated
# expect: AL101 at line 17
# torch: raises RuntimeError "modified by an inplace operation"
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
model = nn.Linear(5, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(8, 5)
ensemble = torch.zeros(8, 3)
for epoch in range(3):
    opt.zero_grad()
    probs = model(x).softmax(-1)
    consistency = F.mse_loss(probs, ensemble)
    ensemble.mul_(0.6).add_(0.4 * probs.detach())
    consistency.backward()
    opt.step()
