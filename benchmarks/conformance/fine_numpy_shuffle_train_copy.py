# source: pytorch/pytorch test/test_numpy_interop.py TestNumPyInterop.test_from_numpy; the fix: the training rows copied out of the permutation and only that copy reshuffled, so the array the held-out indices share is never written
# expect: none
# torch: ok
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

rng = np.random.default_rng(0)
torch.manual_seed(0)
features = torch.randn(100, 4)
labels = (features[:, 0] > 0).long()
perm = rng.permutation(100)
val_idx = torch.from_numpy(perm[:20])  # fixed for the whole run
first_val = val_idx.clone()
train_rows = perm[20:].copy()
model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
seen = set()
for epoch in range(3):
    for batch in np.array_split(train_rows, 4):
        idx = torch.from_numpy(batch)
        seen.update(idx.tolist())
        loss = F.cross_entropy(model(features[idx]), labels[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    rng.shuffle(train_rows)  # a new batch order for the next epoch
    with torch.no_grad():
        accuracy = (model(features[val_idx]).argmax(1) == labels[val_idx]).float().mean()
if not torch.equal(val_idx, first_val) or seen & set(val_idx.tolist()):
    raise SystemExit(1)
