# source: pytorch/pytorch test/test_numpy_interop.py TestNumPyInterop.test_from_numpy (the tensor shares the array's memory); .to(torch.float64) of a float64 tensor returns that same tensor
# expect: AL301 at line 10
# torch: wrong "the raw depth map lost its far points"
import numpy as np
import torch

rng = np.random.default_rng(0)
depth = rng.uniform(0.5, 10.0, size=(4, 4))
scene = torch.from_numpy(depth).to(torch.float64)
scene.clamp_(max=5.0)
far_points = int((depth > 5.0).sum())
if far_points == 0:
    raise SystemExit(1)
