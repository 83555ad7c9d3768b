# source: pytorch/pytorch test/test_nn.py TestNNDeviceType.test_leaky_relu_inplace_with_neg_slope; in training mode an in-place RReLU draws a slope per element and keeps it for backward, so negative bounds are no error
# expect: none
# torch: ok
import torch
from torch import nn


class Backbone(nn.Module):
    def __init__(self, features, classes):
        super().__init__()
        self.fc1 = nn.Linear(features, 16)
        # Randomised slopes in (-0.3, -0.1) while training.
        self.act = nn.RReLU(lower=-0.3, upper=-0.1, inplace=True)
        self.fc2 = nn.Linear(16, classes)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


torch.manual_seed(0)
model = Backbone(6, 3)
# Train with the randomised slopes.
model.train()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
loss = nn.functional.cross_entropy(model(torch.randn(8, 6)), torch.randint(0, 3, (8,)))
opt.zero_grad()
loss.backward()
opt.step()
