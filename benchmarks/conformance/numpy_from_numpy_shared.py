# source: pytorch/pytorch test/test_numpy_interop.py TestNumPyInterop.test_from_numpy (the tensor shares the array's memory)
# expect: AL301 at line 9
# torch: wrong "the array changed through the tensor"
import numpy as np
import torch

frame = np.zeros((2, 2), dtype=np.float32)
pixels = torch.from_numpy(frame)
pixels.add_(1.0)
if frame.sum() != 0.0:
    raise SystemExit(1)
