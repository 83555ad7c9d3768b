# source: https://github.com/mrdbourke/pytorch-deep-learning/issues/926 (writing the array after torch.from_numpy changes the tensor), here a reused batch buffer
# expect: AL301 at line 13
# torch: wrong "the batch already sent to the model changed"
import numpy as np
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
buffer = np.zeros((2, 3), dtype=np.float32)
batch = torch.from_numpy(buffer)
first = model(batch).detach()
buffer[0][1] = 3.0
again = model(batch).detach()
if not torch.equal(first, again):
    raise SystemExit(1)
