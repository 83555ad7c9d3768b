# source: pytorch/pytorch test/test_view_ops.py TestViewOps.test_transpose_view (torch.transpose returns a view), here an input pruned in the transposed weight prepared for export
# expect: AL201 at line 10
# torch: wrong "the live weight lost its first input row"
import torch

torch.manual_seed(0)
weight = torch.randn(4, 3)
trained = weight.clone()
exported = torch.transpose(weight, 0, 1)
exported[0] = 0.0
out = torch.randn(2, 4) @ weight
if not torch.equal(weight, trained):
    raise SystemExit(1)
