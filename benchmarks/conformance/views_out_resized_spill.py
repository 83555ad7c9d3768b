# source: https://github.com/pytorch/pytorch/issues/33351 (an out= view that is too small is resized over its base's storage)
# expect: AL203 at line 10
# torch: wrong "the next slot of the cache was overwritten"
import torch

cache = torch.zeros(3, 2)
cache[1] = torch.tensor([5.0, 6.0])
slot = cache[0]
scores = torch.ones(4)
torch.mul(scores, 2.0, out=slot)
if not torch.equal(cache[1], torch.tensor([5.0, 6.0])):
    raise SystemExit(1)
