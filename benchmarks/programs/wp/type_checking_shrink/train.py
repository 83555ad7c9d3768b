from __future__ import annotations

from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F

if TYPE_CHECKING:
    from models import Net


@torch.no_grad()
def decay_head(model: Net, weight_decay: float) -> None:
    """Decoupled weight decay on the classifier head only."""
    model.fc2.weight.mul_(1.0 - weight_decay)


def train(model: Net, optimizer: torch.optim.Optimizer, loader, weight_decay: float) -> None:
    model.train()
    for data, target in loader:
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)
        decay_head(model, weight_decay)
        loss.backward()
        optimizer.step()
