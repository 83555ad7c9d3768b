# source: pytorch/pytorch test/test_view_ops.py TestViewOps.test_unbind_view (iterating a tensor yields views of its rows), here per-class temperature scaling in an enumerate loop
# expect: AL201 at line 11
# torch: wrong "the raw scores kept for the metric were scaled"
import torch

torch.manual_seed(0)
scores = torch.rand(3, 4)
raw = scores.clone()
temps = [0.5, 1.0, 2.0]
for i, row in enumerate(scores):
    row.div_(temps[i])
auc_input = scores.flatten()
if not torch.equal(scores, raw):
    raise SystemExit(1)
