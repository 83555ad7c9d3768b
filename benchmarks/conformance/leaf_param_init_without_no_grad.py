# source: user report pattern: initialising a layer's weight in place outside no_grad
# expect: AL102 at line 8
# torch: raises RuntimeError "a leaf Variable that requires grad"
import torch
from torch import nn

head = nn.Linear(16, 8)
head.weight.normal_(0.0, 0.02)
