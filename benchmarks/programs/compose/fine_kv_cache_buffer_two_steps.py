# source: https://github.com/meta-llama/llama/blob/8580eb9a896bdb82d376b7040d18a2e7b402b10f/llama/model.py @ 8580eb9a896bdb82d376b7040d18a2e7b402b10f
# expect: none
# torch: ok
# Each call builds the keys and values with torch.cat instead of writing a cache buffer.
import torch
from torch import nn


class CachedAttention(nn.Module):
    def __init__(self, dim, max_len):
        super().__init__()
        self.wq, self.wk, self.wv = nn.Linear(dim, dim), nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.past_k, self.past_v = [], []
        self.scale = dim ** -0.5

    def attend(self, q, keys, values):
        scores = (q @ keys.transpose(1, 2)) * self.scale
        return scores.softmax(dim=-1) @ values

    def forward(self, x, pos):
        q, k, v = self.wq(x), self.wk(x), self.wv(x)
        self.past_k.append(k)
        self.past_v.append(v)
        return self.attend(q, torch.cat(self.past_k, dim=1), torch.cat(self.past_v, dim=1))


def unroll(layer, head, tokens):
    """Teacher-forced decoding one position at a time, training through the cache."""
    logits = []
    for pos in range(tokens.size(1)):
        logits.append(head(layer(tokens[:, pos : pos + 1], pos)))
    return torch.cat(logits, dim=1)


torch.manual_seed(0)
layer, head = CachedAttention(16, max_len=8), nn.Linear(16, 5)
tokens, targets = torch.randn(1, 4, 16), torch.randint(0, 5, (1, 4))
loss = nn.functional.cross_entropy(unroll(layer, head, tokens).flatten(0, 1), targets.flatten())
loss.backward()
print(loss.item())
