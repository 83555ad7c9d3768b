# source: https://github.com/facebookresearch/detectron2/blob/3d3e66416b40da3048814c0654c98f499a3e1944/detectron2/layers/wrappers.py @ 3d3e66416b40da3048814c0654c98f499a3e1944
# expect: AL208 at line 10
# torch: wrong "the reconstruction target was standardised along with the input"
import torch
from torch import nn


class Standardize(nn.Module):
    def forward(self, x, eps=1e-5):
        x.sub_(x.mean(dim=0, keepdim=True))
        return x / (x.std(dim=0, keepdim=True) + eps)


class Logged(nn.Module):
    """Wraps any module and counts its calls; arguments pass through untouched."""

    def __init__(self, module):
        super().__init__()
        self.module = module
        self.calls = 0

    def forward(self, *args, **kwargs):
        self.calls += 1
        return self.module(*args, **kwargs)


def reconstruction_error(prep, decoder, x):
    z = prep(x, eps=1e-6)
    return (decoder(z) - x).pow(2).mean(), x


torch.manual_seed(0)
batch = torch.randn(16, 4) * 3 + 5
offset = batch.mean().item()
err, target = reconstruction_error(Logged(Standardize()), nn.Linear(4, 4), batch)
if abs(target.mean().item() - offset) > 1.0:
    raise SystemExit(1)
