# source: pytorch/pytorch test/test_numpy_interop.py (torch.tensor copies the array)
# expect: none
# torch: ok
import numpy as np
import torch

frame = np.zeros((2, 2), dtype=np.float32)
pixels = torch.tensor(frame)
pixels.add_(1.0)
assert frame.sum() == 0.0
