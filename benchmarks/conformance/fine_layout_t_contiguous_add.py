# source: pytorch/pytorch test/test_view_ops.py TestViewOps.test_contiguous_nonview (contiguous() of a transpose of a 3x4 tensor always copies)
# expect: none
# torch: ok
import torch

torch.manual_seed(0)
m = torch.rand(3, 4)
before = m.clone()
shifted = m.t().contiguous().add_(1.0)
if not torch.equal(m, before):
    raise SystemExit(1)
if not torch.equal(shifted, before.t() + 1.0):
    raise SystemExit(1)
