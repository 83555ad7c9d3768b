# source: https://github.com/OmidPoursaeed/Generative_Adversarial_Perturbations/issues/4 (a .data write is invisible to autograd, so the gradient matches neither function), here cosine-classifier prototypes renormalised through .data after the matmul that saved them
# expect: AL103 at line 20
# torch: wrong "the encoder's gradient used the renormalised prototypes, not the ones the logits were computed with"
import torch
import torch.nn.functional as F
from torch import nn


class CosineHead(nn.Module):
    def __init__(self, dim, classes, scale=10.0):
        super().__init__()
        self.prototypes = nn.Parameter(torch.randn(classes, dim))
        self.scale = scale

    def forward(self, feats):
        feats = F.normalize(feats, dim=1)
        logits = feats @ self.prototypes.t()
        # Keep the prototypes on the unit sphere.
        norms = self.prototypes.data.norm(dim=1, keepdim=True)
        self.prototypes.data.div_(norms)
        return logits * self.scale


torch.manual_seed(0)
encoder, head = nn.Linear(8, 5), CosineHead(5, 3)
x, y = torch.randn(12, 8), torch.randint(0, 3, (12,))
used = head.prototypes.detach().clone()
F.cross_entropy(head(encoder(x)), y).backward()
feats = F.normalize(encoder(x), dim=1)
expected, = torch.autograd.grad(F.cross_entropy(feats @ used.t() * 10.0, y), encoder.weight)
if not torch.allclose(encoder.weight.grad, expected):
    raise SystemExit(1)
