# source: pytorch/pytorch test/test_view_ops.py TestViewOps.test_basic_indexing_slice_view; the fix: the noisy inputs made out of place, so the target window keeps the clean series
# expect: none
# torch: ok
import torch
import torch.nn.functional as F
from torch import nn


class NextStep(nn.Module):
    def __init__(self, features, hidden):
        super().__init__()
        self.rnn = nn.GRU(features, hidden, batch_first=True)
        self.head = nn.Linear(hidden, features)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.head(out)


torch.manual_seed(0)
model = NextStep(3, 8)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
series = torch.randn(4, 11, 3)
clean_targets = series[:, 1:].clone()
inputs, targets = series[:, :-1], series[:, 1:]
# Input noise for robustness; the targets should stay clean.
inputs = inputs + 0.1 * torch.randn_like(inputs)
loss = F.mse_loss(model(inputs), targets)
opt.zero_grad()
loss.backward()
opt.step()
if not torch.equal(targets, clean_targets):
    raise SystemExit(1)
