# source: https://github.com/anndvision/causal-bald/pull/8 ("deep copy and save at end of training": the best state_dict() kept during training and written to the checkpoint at the end)
# expect: AL207 at line 16
# torch: wrong "the checkpoint holds the last weights, not the best ones"
import io

import torch
from torch import nn


def train(model, x, y, epochs):
    opt = torch.optim.SGD(model.parameters(), lr=0.3)
    best_loss, best_state = float("inf"), None
    for _ in range(epochs):
        loss = nn.functional.mse_loss(model(x), y)
        if loss.item() < best_loss:
            best_loss, best_state = loss.item(), model.state_dict()
        opt.zero_grad()
        loss.backward()
        opt.step()
    checkpoint = io.BytesIO()
    torch.save({"model": best_state, "loss": best_loss}, checkpoint)
    return checkpoint.getvalue()


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
