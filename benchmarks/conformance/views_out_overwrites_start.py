# source: https://github.com/pytorch/pytorch/issues/33351 (out= writes into storage that a named view still shows), here the start position kept as a view
# expect: AL201 at line 10
# torch: wrong "the displacement from the start is zero"
import torch

torch.manual_seed(0)
positions = torch.rand(5, 2)
velocity = torch.rand(5, 2) + 0.1
start = positions[0]
torch.add(positions, velocity, out=positions)
moved = (positions[0] - start).norm().item()
if moved == 0.0:
    raise SystemExit(1)
