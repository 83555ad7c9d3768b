# source: pytorch/pytorch test/test_nn.py TestNNDeviceType.test_leaky_relu_inplace_with_neg_slope (its rrelu_ part: in eval mode an in-place RReLU is a leaky ReLU with slope (lower + upper) / 2, and a negative slope cannot run backward)
# expect: AL105 at line 13
# torch: raises RuntimeError "negative slope"
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
# Fine-tune with the activation's deterministic eval-mode slope.
model.eval()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
loss = nn.functional.cross_entropy(model(torch.randn(8, 6)), torch.randint(0, 3, (8,)))
opt.zero_grad()
loss.backward()
opt.step()
