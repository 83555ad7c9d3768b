# source: https://github.com/huggingface/pytorch-image-models/blob/aa4b5850c1543fa488abf260f18390eda46cf85d/timm/models/_features.py @ aa4b5850c1543fa488abf260f18390eda46cf85d
# expect: none
# torch: ok
# The normaliser stores new tensors in the dict.
import torch

from losses import info_nce, l2_normalize
from models import Encoder, extract


def two_view_loss(encoder, view1, view2):
    f1 = l2_normalize(extract(encoder, view1))
    f2 = l2_normalize(extract(encoder, view2))
    return sum(info_nce(f1[name], f2[name]) for name in f1)


torch.manual_seed(0)
encoder = Encoder()
x = torch.randn(8, 12)
loss = two_view_loss(encoder, x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x))
loss.backward()
print(loss.item())
