# source: https://github.com/karpathy/nanoGPT/blob/3adf61e154c3fe3fca428ad6bc3818b27a3b8291/train.py @ 3adf61e154c3fe3fca428ad6bc3818b27a3b8291
# expect: none
# torch: ok
# The checkpoint is copy.deepcopy'd when it is taken.
import copy

import torch
from torch import nn


def take_checkpoint(model, optimizer, iter_num, best_val_loss):
    checkpoint = copy.deepcopy({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "iter_num": iter_num, "best_val_loss": best_val_loss})
    return checkpoint


def rollback(model, optimizer, checkpoint):
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    return checkpoint["iter_num"]


torch.manual_seed(0)
model = nn.Sequential(nn.Embedding(20, 16), nn.Linear(16, 20))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
data = torch.randint(0, 20, (32, 9))
good = None
for iter_num in range(8):
    logits = model(data[:, :-1])
    loss = nn.functional.cross_entropy(logits.flatten(0, 1), data[:, 1:].flatten())
    if iter_num == 3:
        good = take_checkpoint(model, optimizer, iter_num, loss.item())
        weights_at_3 = model[1].weight.detach().clone()
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
rollback(model, optimizer, good)
if not torch.equal(model[1].weight, weights_at_3):
    raise SystemExit(1)
