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
