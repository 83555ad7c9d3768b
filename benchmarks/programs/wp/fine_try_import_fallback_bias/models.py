import torch
from torch import nn

try:
    from fused_kernels import bias_sigmoid_gate
except ImportError:
    from fallback import bias_sigmoid_gate


class GatedMlp(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc_value = nn.Linear(dim, hidden)
        self.fc_gate = nn.Linear(dim, hidden, bias=False)
        self.gate_bias = nn.Parameter(torch.zeros(hidden))
        self.fc_out = nn.Linear(hidden, dim)

    def forward(self, x):
        gate = torch.exp(self.fc_gate(x) * 0.1)
        return self.fc_out(self.fc_value(x) * bias_sigmoid_gate(gate, self.gate_bias))
