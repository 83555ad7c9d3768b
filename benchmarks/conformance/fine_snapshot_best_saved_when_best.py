# source: https://github.com/anndvision/causal-bald/pull/8 (the fix: the best weights serialised when they are the best, so the bytes are a copy)
# expect: none
# torch: ok
import io

import torch
from torch import nn


def train(model, x, y, epochs):
    opt = torch.optim.SGD(model.parameters(), lr=0.3)
    best_loss, best_bytes = float("inf"), None
    for _ in range(epochs):
        loss = nn.functional.mse_loss(model(x), y)
        if loss.item() < best_loss:
            best_loss, best_bytes = loss.item(), io.BytesIO()
            torch.save({"model": model.state_dict(), "loss": best_loss}, best_bytes)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return best_bytes.getvalue()


torch.manual_seed(0)
x, y = torch.randn(32, 3), torch.randn(32, 1)
blob = train(nn.Linear(3, 1), x, y, 8)
saved = torch.load(io.BytesIO(blob))
fresh = nn.Linear(3, 1)
fresh.load_state_dict(saved["model"])
with torch.no_grad():
    reloaded = nn.functional.mse_loss(fresh(x), y).item()
if abs(reloaded - saved["loss"]) > 1e-6:
    raise SystemExit(1)
