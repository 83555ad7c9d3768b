# source: https://pytorch.org/docs/stable/generated/torch.nn.Embedding.html (with max_norm, forward renormalises the weight in place)
# expect: AL101 at line 13
# torch: raises RuntimeError "modified by an inplace operation"
import torch
from torch import nn

torch.manual_seed(0)
vocab = nn.Embedding(10, 4, max_norm=1.0)
context = torch.randn(6, 4, requires_grad=True)
ids = torch.tensor([1, 2, 5])
# Scores of every word against the context: the matmul keeps the weight for backward.
all_scores = vocab.weight @ context.t()
picked = vocab(ids) @ context.t()
loss = all_scores.logsumexp(0).sum() - picked.sum()
loss.backward()
