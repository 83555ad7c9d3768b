"""AL301 numpy-shared-write: its positive and negative cases (format: tests/test_rules.py)."""


# case: both directions
import numpy as np
import torch
raw = np.ones((2, 2), dtype=np.float32)
t = torch.from_numpy(raw)
t.div_(2)  # error: AL301
print(raw)
x = torch.ones(3)
arr = x.numpy()
arr *= 2  # error: AL301
print(x)


# case: copies
import numpy as np
import torch
raw = np.ones((2, 2), dtype=np.float32)
t = torch.tensor(raw)
t.div_(2)
u = torch.from_numpy(raw.copy())
u.div_(2)
v = torch.as_tensor(raw, dtype=torch.float64)
v.div_(2)
print(raw)


# case: the NumPy side written through a chained subscript
# runs: raises AssertionError
import numpy as np
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(3, 1)
buffer = np.zeros((2, 3), dtype=np.float32)
batch = torch.from_numpy(buffer)
first = model(batch).detach()
buffer[0][1] = 3.0  # error: AL301
assert torch.equal(first, model(batch).detach())


# case: as_tensor of an array made from Python data
# runs: raises AssertionError
import numpy as np
import torch
audio = np.array([0.2, -1.7, 0.9, 2.4], dtype=np.float32)
wave = torch.as_tensor(audio)
wave.clamp_(-1.0, 1.0)  # error: AL301
assert float(np.abs(audio).max()) > 1.0


# case: an array exported with .cpu().numpy() and normalised in place
# runs: raises AssertionError
import numpy as np
import torch
torch.manual_seed(0)
emb = torch.randn(5, 3)
arr = emb.cpu().numpy()
arr /= np.linalg.norm(arr, axis=1, keepdims=True)  # low: AL301
assert not torch.allclose(emb.norm(dim=1), torch.ones(5))
