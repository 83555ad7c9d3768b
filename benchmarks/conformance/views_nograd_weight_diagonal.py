# source: pytorch/pytorch test/test_autograd.py (a view made under no_grad and written with grad mode on: "A view was created in no_grad mode")
# expect: AL106 at line 10
# torch: raises RuntimeError "A view was created in no_grad mode"
import torch
from torch import nn

mixer = nn.Linear(4, 4)
with torch.no_grad():
    diag = mixer.weight.diagonal()
diag.fill_(1.0)
