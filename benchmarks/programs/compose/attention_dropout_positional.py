# source: https://github.com/huggingface/pytorch-image-models/blob/aa4b5850c1543fa488abf260f18390eda46cf85d/timm/models/vision_transformer.py @ aa4b5850c1543fa488abf260f18390eda46cf85d
# expect: AL105 at line 15
# torch: raises RuntimeError "modified by an inplace operation"
# nn.Dropout(p, True) binds inplace=True by position; registered with register_module, it rewrites the softmax output that softmax saved.
import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self, dim, num_heads=4, attn_drop=0.1):
        super().__init__()
        self.num_heads = num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.register_module("attn_drop", nn.Dropout(attn_drop, True))
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn.softmax(dim=-1)
        attn = self.attn_drop(attn)
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        return self.proj(x)


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.attn = Attention(dim)

    def forward(self, x):
        return x + self.attn(self.norm(x))


torch.manual_seed(0)
model = nn.Sequential(Block(32), Block(32))
tokens = torch.randn(2, 9, 32)
model(tokens).pow(2).mean().backward()
print(model[0].attn.qkv.weight.grad.norm())
