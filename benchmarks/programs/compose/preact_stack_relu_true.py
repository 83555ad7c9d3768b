# source: https://github.com/huggingface/pytorch-image-models/blob/aa4b5850c1543fa488abf260f18390eda46cf85d/timm/models/resnet.py @ aa4b5850c1543fa488abf260f18390eda46cf85d
# expect: AL105 at line 11
# torch: raises RuntimeError "modified by an inplace operation"
# Pre-activation blocks built by a comprehension: each starts with nn.ReLU(True) (positional inplace=True) and rewrites the previous block's Tanh output.
import torch
from torch import nn


def preact_block(dim, act_layer):
    # activation first, then the projection and a bounded output, as in a pre-activation stack
    return nn.Sequential(act_layer(True), nn.Linear(dim, dim), nn.Tanh())


class Encoder(nn.Module):
    def __init__(self, in_dim, dim, depth):
        super().__init__()
        self.stem = nn.Linear(in_dim, dim)
        self.blocks = nn.Sequential(*[preact_block(dim, nn.ReLU) for _ in range(depth)])
        self.head = nn.Linear(dim, 4)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)))


def fit(model, batches):
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for x, y in batches:
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()


torch.manual_seed(0)
data = [(torch.randn(16, 10), torch.randint(0, 4, (16,))) for _ in range(3)]
print(fit(Encoder(10, 32, depth=3), data))
