# source: pytorch/pytorch test/cpp/api/autograd.cpp TestAutogradNotImplementedFallback ('A view was created in no_grad mode')
# expect: AL106 at line 9
# torch: raises RuntimeError "A view was created in no_grad mode"
import torch

base = torch.ones(4, requires_grad=True).clone()
with torch.no_grad():
    head = base.view(-1)[:2]
head.add_(1.0)
