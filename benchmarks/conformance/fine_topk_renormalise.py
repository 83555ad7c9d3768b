# source: user report pattern: a mixture-of-experts router renormalising its top-k weights in place (topk keeps only the indices for backward, sum keeps nothing)
# expect: none
# torch: ok
import torch
from torch import nn

torch.manual_seed(0)
router = nn.Linear(8, 4)
probs = router(torch.randn(6, 8)).softmax(-1)
weights, experts = probs.topk(2, dim=-1)
weights /= weights.sum(-1, keepdim=True)
weights.sum().backward()
