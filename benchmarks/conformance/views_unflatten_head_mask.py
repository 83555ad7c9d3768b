# source: pytorch/pytorch test/test_view_ops.py (unflatten of a contiguous tensor is a view), here one attention head masked out for a probing run
# expect: AL201 at line 10
# torch: wrong "the hidden state kept for the residual lost head 1"
import torch

torch.manual_seed(0)
hidden = torch.randn(2, 6)
saved = hidden.clone()
heads = torch.unflatten(hidden, 1, (2, 3))
heads[:, 1] = 0.0
residual = hidden + 1.0
if not torch.equal(hidden, saved):
    raise SystemExit(1)
