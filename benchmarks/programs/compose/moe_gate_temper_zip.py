# source: https://github.com/huggingface/pytorch-image-models/blob/aa4b5850c1543fa488abf260f18390eda46cf85d/timm/models/vision_transformer.py @ aa4b5850c1543fa488abf260f18390eda46cf85d
# expect: AL101 at line 27
# torch: raises RuntimeError "modified by an inplace operation"
# The per-head gate weights are softmax outputs kept in a list; the tempering helper walks zip/enumerate and raises each to a power in place.
import torch
from torch import nn


class MultiGate(nn.Module):
    """One softmax gate per task over a shared set of experts (multi-gate mixture of experts)."""

    def __init__(self, dim, num_experts, num_tasks):
        super().__init__()
        self.experts = nn.ModuleList(nn.Linear(dim, dim) for _ in range(num_experts))
        self.gates = nn.ModuleList(nn.Linear(dim, num_experts) for _ in range(num_tasks))

    def gate_weights(self, x):
        return [torch.softmax(g(x), dim=-1) for g in self.gates]

    def mix(self, x, weights):
        expert_out = torch.stack([e(x) for e in self.experts], dim=1)
        return [(w.unsqueeze(-1) * expert_out).sum(dim=1) for w in weights]


def temper(weights, temperatures):
    for i, (w, t) in enumerate(zip(weights, temperatures)):
        w.pow_(1.0 / t)
        weights[i] = w / w.sum(dim=-1, keepdim=True)
    return weights


torch.manual_seed(0)
model = MultiGate(16, num_experts=4, num_tasks=2)
x = torch.randn(8, 16)
weights = temper(model.gate_weights(x), [0.5, 2.0])
outs = model.mix(x, weights)
sum(o.pow(2).mean() for o in outs).backward()
print(model.gates[0].weight.grad.norm())
