import torch
import torch.nn.functional as F
from torch import nn


class DistillModule(nn.Module):
    def __init__(self, start_temperature=4.0, decay=0.95):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 3))
        self.decay = decay
        self.register_buffer("temperature", torch.tensor(start_temperature))

    def training_step(self, batch):
        x, y = batch
        logits = self.net(x) / self.temperature
        return F.cross_entropy(logits, y)

    def on_train_batch_end(self, loss):
        # anneal the softmax temperature once per step
        self.temperature.mul_(self.decay)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)
