# source: https://github.com/mlverse/torchbook_materials/issues/1 (a NumPy view of a CPU tensor writes the tensor), here np.asarray of an occupancy mask edited for plotting
# expect: AL301 at line 9
# torch: wrong "the mask tensor was carved out by the plotting code"
import numpy as np
import torch

mask = torch.ones(4, 4)
grid = np.asarray(mask)
grid[1:3, 1:3] = 0.0
coverage = mask.mean().item()
if coverage != 1.0:
    raise SystemExit(1)
