# source: pytorch/pytorch test/test_view_ops.py TestViewOps.test_as_strided_view (as_strided returns a view), here per-frame mean removal on framed audio
# expect: AL201 at line 10
# torch: wrong "the raw signal lost its frame means"
import torch

torch.manual_seed(0)
signal = torch.rand(12)
raw = signal.clone()
frames = torch.as_strided(signal, (3, 4), (4, 1))
frames.sub_(frames.mean(dim=1, keepdim=True))
loudness = signal.abs().mean()
if not torch.equal(signal, raw):
    raise SystemExit(1)
