# source: https://pytorch.org/docs/stable/generated/torch.nn.Embedding.html (clone the weight before a differentiable use when max_norm is set)
# expect: none
# torch: ok
import torch
from torch import nn

torch.manual_seed(0)
vocab = nn.Embedding(10, 4, max_norm=1.0)
context = torch.randn(6, 4, requires_grad=True)
ids = torch.tensor([1, 2, 5])
all_scores = vocab.weight.clone() @ context.t()
picked = vocab(ids) @ context.t()
loss = all_scores.logsumexp(0).sum() - picked.sum()
loss.backward()
