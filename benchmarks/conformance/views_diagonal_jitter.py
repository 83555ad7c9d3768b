# source: pytorch/pytorch test/test_view_ops.py TestViewOps.test_diagonal_view (torch.diagonal returns a view), here jitter added for a Cholesky factorisation
# expect: AL201 at line 11
# torch: wrong "the empirical covariance was changed by the jitter"
import torch

torch.manual_seed(0)
feats = torch.randn(8, 3)
cov = feats.t() @ feats / 8
empirical = cov.clone()
diag = torch.diagonal(cov)
diag.add_(1e-2)
chol = torch.linalg.cholesky(cov)
if not torch.equal(cov, empirical):
    raise SystemExit(1)
