# source: user report pattern: an aliasing guard written with `is`, which a view slips past
# expect: AL402 at line 8
# torch: wrong "the guard missed a view and the source was overwritten while being read"
import torch


def reversed_into(out: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    if out is src:
        src = src.clone()
    n = src.shape[0]
    for i in range(n):
        out[i] = src[n - 1 - i]
    return out


seq = torch.arange(4.0)
reversed_into(seq[:], seq)
if not torch.equal(seq, torch.tensor([3.0, 2.0, 1.0, 0.0])):
    raise SystemExit(1)
