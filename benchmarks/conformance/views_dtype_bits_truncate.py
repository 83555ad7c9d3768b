# source: pytorch/pytorch test/test_view_ops.py TestViewOps.test_view_dtype_new (Tensor.view(dtype) reinterprets the same storage), here bfloat16 rounding simulated on the bits of float32 weights
# expect: AL201 at line 12
# torch: wrong "the measured rounding error is zero: the weights were truncated too"
import torch
from torch import nn


def bfloat16_error(weights):
    """The largest change that storing `weights` in bfloat16 (truncated) would make."""
    bits = weights.view(torch.int32)
    # Keep the sign, the exponent and the top 7 mantissa bits.
    bits &= -65536
    truncated = bits.view(torch.float32)
    return (weights - truncated).abs().max().item()


torch.manual_seed(0)
layer = nn.Linear(16, 16)
with torch.no_grad():
    report = {name: bfloat16_error(p) for name, p in layer.named_parameters()}
if min(report.values()) == 0.0:
    raise SystemExit(1)
