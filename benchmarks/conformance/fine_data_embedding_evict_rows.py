# source: https://github.com/meta-pytorch/torchrec/pull/2836 (rows of an embedding table re-initialised through .data between several forward passes and the backward pass); the embedding's backward needs only the ids, so no saved tensor is changed
# expect: none
# torch: ok
import copy

import torch
from torch import nn


class EvictingEmbedding(nn.Module):
    """An id table whose rows are reset when the cache evicts their ids."""

    def __init__(self, rows, dim):
        super().__init__()
        self.table = nn.Embedding(rows, dim)

    def evict(self, rows):
        self.table.weight.data[rows] = 0.0

    def forward(self, ids):
        return self.table(ids)


torch.manual_seed(0)
model, head = EvictingEmbedding(10, 4), nn.Linear(4, 1)
reference = copy.deepcopy(model)
ids = torch.tensor([1, 2, 3, 1])
loss = head(model(ids)).pow(2).mean()
model.evict(torch.tensor([3, 7]))  # id 3 was looked up by this batch
loss.backward()
head.zero_grad()
head(reference(ids)).pow(2).mean().backward()
if not torch.equal(model.table.weight.grad, reference.table.weight.grad):
    raise SystemExit(1)
