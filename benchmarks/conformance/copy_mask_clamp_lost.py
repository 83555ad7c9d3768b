# source: https://github.com/pytorch/pytorch/issues/80945 (an in-place op on a boolean-mask index changes nothing)
# expect: AL204 at line 7
# torch: wrong "the infinite entries are still infinite"
import torch

scores = torch.tensor([[1.0, 0.0, 3.1], [4.1, 5.1, 6.1]]).log().abs()
scores[scores.isinf()].clamp_(max=10.0)
if torch.isinf(scores).any():
    raise SystemExit(1)
