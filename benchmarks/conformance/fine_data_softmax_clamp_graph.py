# source: https://github.com/pytorch/pytorch/issues/6990 (use operations autograd sees instead of .data), here the probability floor made with an out-of-place clamp
# expect: none
# torch: ok
import copy

import torch
import torch.nn.functional as F
from torch import nn


class Classifier(nn.Module):
    def __init__(self, features, classes):
        super().__init__()
        self.fc = nn.Linear(features, classes)

    def forward(self, x):
        probs = F.softmax(self.fc(x), dim=1)
        # Keep log() away from -inf.
        return probs.clamp(min=0.05)


def nll(probs, target):
    return -probs.gather(1, target[:, None]).log().mean()


torch.manual_seed(0)
model = Classifier(6, 4)
reference = copy.deepcopy(model)
x, target = torch.randn(16, 6) * 4.0, torch.randint(0, 4, (16,))
nll(model(x), target).backward()
# The same floor as an operation of the graph.
nll(F.softmax(reference.fc(x), dim=1).clamp(min=0.05), target).backward()
if not torch.allclose(model.fc.weight.grad, reference.fc.weight.grad):
    raise SystemExit(1)
