# source: user report fix: the previous column cloned before the tensor is updated by item assignment
# expect: none
# torch: ok
import torch

torch.manual_seed(0)
state = torch.rand(4, 3)
prev = state[:, 0].clone()
state[:, 0] = state[:, 0] + 0.5
delta = state[:, 0] - prev
if not torch.allclose(delta, torch.full((4,), 0.5)):
    raise SystemExit(1)
