# source: user report pattern: a function's parameters written after exp saved them
# expect: AL101 at line 9
# torch: raises RuntimeError "modified by an inplace operation"
import torch


def score(w, x):
    h = torch.exp(x @ w)
    h.clamp_(max=10.0)
    h.sum().backward()


score(torch.randn(3, 2, requires_grad=True), torch.randn(4, 3))
