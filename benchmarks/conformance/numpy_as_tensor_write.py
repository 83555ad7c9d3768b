# source: https://pytorch.org/docs/stable/generated/torch.as_tensor.html (a NumPy array of a matching dtype is shared, not copied)
# expect: AL301 at line 9
# torch: wrong "the raw audio buffer was clipped as well"
import numpy as np
import torch

audio = np.array([0.2, -1.7, 0.9, 2.4], dtype=np.float32)
wave = torch.as_tensor(audio)
wave.clamp_(-1.0, 1.0)
peak = float(np.abs(audio).max())
if peak <= 1.0:
    raise SystemExit(1)
