# source: user report pattern: porting a TensorFlow (in, out) kernel with layer.weight.t().data = kernel; the transpose is a temporary tensor object
# expect: AL209 at line 10
# torch: wrong "the layer kept its random weights"
import torch
from torch import nn

torch.manual_seed(0)
layer = nn.Linear(3, 2)
kernel = torch.ones(3, 2)
layer.weight.t().data = kernel
if not torch.equal(layer.weight, kernel.t()):
    raise SystemExit(1)
