# source: https://github.com/huggingface/pytorch-image-models/blob/aa4b5850c1543fa488abf260f18390eda46cf85d/timm/models/vision_transformer.py @ aa4b5850c1543fa488abf260f18390eda46cf85d
# expect: AL101 at line 39
# torch: raises RuntimeError "modified by an inplace operation"
# forward keeps the softmax attention on self for visualisation; the rollout method adds the identity to it in place before the training step's backward.
import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)
        self.scale = dim ** -0.5
        self.last_attn = None

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        attn = ((q @ k.transpose(-2, -1)) * self.scale).softmax(dim=-1)
        self.last_attn = attn
        return self.proj(attn @ v)


class TinyViT(nn.Module):
    def __init__(self, dim=16, depth=2, num_classes=3):
        super().__init__()
        self.blocks = nn.ModuleList(Attention(dim) for _ in range(depth))
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x):
        for blk in self.blocks:
            x = x + blk(x)
        return self.head(x[:, 0])

    def attention_rollout(self):
        rollout = None
        for blk in self.blocks:
            a = blk.last_attn
            a += torch.eye(a.size(-1))
            a = a / a.sum(dim=-1, keepdim=True)
            rollout = a if rollout is None else a @ rollout
        return rollout


torch.manual_seed(0)
model = TinyViT()
tokens, labels = torch.randn(2, 5, 16), torch.tensor([0, 2])
loss = nn.functional.cross_entropy(model(tokens), labels)
saliency = model.attention_rollout()[:, 0, 1:]
loss.backward()
print(loss.item(), saliency.shape)
