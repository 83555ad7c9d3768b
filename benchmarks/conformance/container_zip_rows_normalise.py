# source: pytorch/pytorch test/test_view_ops.py TestViewOps.test_unbind_view (iterating a tensor yields views), here rows normalised in a zip loop for a cosine similarity
# expect: AL201 at line 10
# torch: wrong "the feature magnitudes used later were normalised away"
import torch

torch.manual_seed(0)
feats = torch.rand(3, 5) + 0.5
norms = feats.norm(dim=1)
for row, n in zip(feats, norms):
    row.div_(n)
magnitude = feats.norm(dim=1)
if torch.allclose(magnitude, torch.ones(3)):
    raise SystemExit(1)
