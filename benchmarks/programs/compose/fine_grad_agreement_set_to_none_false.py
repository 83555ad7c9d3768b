# source: https://github.com/Lightning-AI/pytorch-lightning/blob/7f0c3436cd3f6ad3753125672024fc415cbcb414/src/lightning/pytorch/callbacks/lr_monitor.py @ 7f0c3436cd3f6ad3753125672024fc415cbcb414
# expect: none
# torch: ok
# zero_grad() with its default set_to_none=True: the next backward makes new gradient tensors and the kept ones keep their values.
import torch
import torch.nn.functional as F
from torch import nn


class GradAgreementMonitor:
    """Cosine similarity between consecutive steps' gradients."""

    def __init__(self, model):
        self.model = model
        self.prev = None
        self.history = []

    def on_after_backward(self):
        grads = [p.grad for p in self.model.parameters()]
        if self.prev is not None:
            cur = torch.cat([g.flatten() for g in grads])
            old = torch.cat([g.flatten() for g in self.prev])
            self.history.append(F.cosine_similarity(cur, old, dim=0).item())
        self.prev = grads


def fit(model, opt, monitor, batches):
    for x, y in batches:
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        monitor.on_after_backward()
        opt.step()


torch.manual_seed(0)
model = nn.Linear(5, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
monitor = GradAgreementMonitor(model)
batches = [(torch.randn(8, 5), torch.randn(8, 1)) for _ in range(4)]
fit(model, opt, monitor, batches)
if all(abs(s - 1.0) < 1e-6 for s in monitor.history):
    raise SystemExit(1)
print(monitor.history)
