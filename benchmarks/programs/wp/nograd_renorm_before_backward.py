# source: https://github.com/pytorch/examples/blob/f15fac72e01158bcb704dded7c7e511f7a712a5f/mnist/main.py @ f15fac72e01158bcb704dded7c7e511f7a712a5f
# expect: AL101 at line 23
# torch: raises RuntimeError "modified by an inplace operation"
import torch
import torch.nn.functional as F
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


@torch.no_grad()
def max_norm_(model, max_norm=1.0):
    w = model.fc2.weight
    norms = w.norm(dim=1, keepdim=True).clamp(min=max_norm)
    w.mul_(max_norm / norms)


def train(model, optimizer, data, target):
    model.train()
    optimizer.zero_grad()
    output = model(data)
    loss = F.nll_loss(output, target)
    max_norm_(model)
    loss.backward()
    optimizer.step()
    return loss.item()


torch.manual_seed(0)
net = Net()
train(net, torch.optim.SGD(net.parameters(), lr=0.1), torch.randn(8, 20), torch.randint(0, 4, (8,)))
