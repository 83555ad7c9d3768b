# source: https://github.com/pytorch/examples/pull/779 (word_language_model's hand-written update p.add_ outside torch.no_grad)
# expect: AL102 at line 14
# torch: raises RuntimeError "a leaf Variable that requires grad"
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
model = nn.Linear(4, 2)
lr = 0.5
loss = F.cross_entropy(model(torch.randn(8, 4)), torch.randint(0, 2, (8,)))
loss.backward()
for p in model.parameters():
    p.add_(p.grad, alpha=-lr)
