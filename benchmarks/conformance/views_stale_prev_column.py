# source: user report pattern: the "previous" column kept as a basic-index view, then the tensor updated by item assignment and the change measured against the view
# expect: AL201 at line 9
# torch: wrong "the measured change of the state is zero"
import torch

torch.manual_seed(0)
state = torch.rand(4, 3)
prev = state[:, 0]
state[:, 0] = state[:, 0] + 0.5
delta = state[:, 0] - prev
if not torch.allclose(delta, torch.full((4,), 0.5)):
    raise SystemExit(1)
