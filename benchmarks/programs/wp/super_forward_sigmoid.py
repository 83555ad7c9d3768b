# source: https://github.com/huggingface/pytorch-image-models/blob/a2e4a4c14849bc6012467b073a31d2a48036fd0e/timm/layers/activations.py @ a2e4a4c14849bc6012467b073a31d2a48036fd0e
# expect: AL101 at line 24
# torch: raises RuntimeError "modified by an inplace operation"
import torch
from torch import nn


class GateLayer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        return torch.sigmoid(self.proj(x))


class HardenedGate(GateLayer):
    def __init__(self, dim, floor=0.1):
        super().__init__(dim)
        self.floor = floor

    def forward(self, x):
        gate = super().forward(x)
        gate.clamp_(min=self.floor)
        return gate


def run(model, batch):
    gate = model(batch)
    loss = (gate * batch).sum()
    loss.backward()
    return loss


torch.manual_seed(0)
run(HardenedGate(6), torch.randn(3, 6))
