# source: user report pattern: normalising embeddings in place by their norm
# expect: AL101 at line 10
# torch: raises RuntimeError "modified by an inplace operation"
import torch
from torch import nn

embed = nn.Embedding(10, 4)
h = embed(torch.tensor([1, 2, 3]))
norms = h.norm(dim=-1, keepdim=True)
h.div_(norms)
h.sum().backward()
