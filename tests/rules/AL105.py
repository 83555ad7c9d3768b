"""AL105 inplace-activation-clobbers-input: its positive and negative cases (format: tests/test_rules.py)."""


# case: functional inplace activation
# runs: raises RuntimeError
import torch
import torch.nn.functional as F
w = torch.randn(3, requires_grad=True)
s = torch.sigmoid(w)
F.relu(s, inplace=True)  # error: AL105
s.sum().backward()


# case: inplace module clobbers skip
import torch
from torch import nn
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU(inplace=True)  # error: AL105
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        skip = x
        h = self.act(x)
        return self.fc(h) + skip


# case: inplace on fresh tensors
import torch
from torch import nn
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU(inplace=True)
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        x = self.act(self.fc(x))
        return x + 1


# case: leaky relu module with a negative slope in place
# runs: raises RuntimeError
import torch
from torch import nn
class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)
        self.act = nn.LeakyReLU(-0.2, inplace=True)  # error: AL105
        self.out = nn.Linear(16, 1)
    def forward(self, x):
        return self.out(self.act(self.fc(x)))
disc = Discriminator()
disc(torch.randn(8, 16)).mean().backward()


# case: functional negative slopes in place
# runs: raises RuntimeError
import torch
import torch.nn.functional as F
w = torch.randn(6, 6, requires_grad=True)
h = torch.randn(3, 6) @ w
F.leaky_relu(h, negative_slope=-0.1, inplace=True)  # error: AL105
h.sum().backward()


# case: elu with a negative alpha in place
# runs: raises RuntimeError
import torch
import torch.nn.functional as F
w = torch.randn(6, 6, requires_grad=True)
g = torch.randn(3, 6) @ w
F.elu_(g, alpha=-1.0)  # error: AL105
g.pow(2).sum().backward()


# case: elu module with a negative alpha
# runs: raises RuntimeError
import torch
from torch import nn
net = nn.Sequential(nn.Linear(4, 4), nn.ELU(alpha=-0.5, inplace=True))  # error: AL105
loss = net(torch.randn(2, 4)).sum()
loss.backward()


# case: rrelu in eval with a negative range
# runs: raises RuntimeError
import torch
import torch.nn.functional as F
w = torch.randn(6, 6, requires_grad=True)
r = torch.randn(3, 6) @ w
F.rrelu(r, -0.3, -0.1, inplace=True)  # error: AL105
r.mean().backward()


# case: slopes that the in-place backward accepts
# runs: ok
import torch
import torch.nn.functional as F
from torch import nn
w = torch.randn(6, 6, requires_grad=True)
a = torch.randn(3, 6) @ w
F.leaky_relu(a, 0.0, inplace=True)
b = torch.randn(3, 6) @ w
F.leaky_relu(b, -0.1)
c = torch.randn(3, 6) @ w
F.rrelu(c, -0.3, -0.1, training=True, inplace=True)
d = torch.randn(3, 6) @ w
d = nn.RReLU(-0.3, -0.1, inplace=True)(d)
(a.sum() + b.sum() + c.sum() + d.sum()).backward()
with torch.no_grad():
    e = torch.randn(3, 6) @ w
    F.leaky_relu(e, -0.1, inplace=True)


# case: the torch function of an in-place activation, and one looked up by name
# runs: raises RuntimeError
import torch
w = torch.randn(4, 4, requires_grad=True)
h = torch.tanh(torch.randn(2, 4) @ w)
torch.relu_(h)  # error: AL105
act = getattr(torch, "relu_")
g = torch.tanh(torch.randn(2, 4) @ w)
act(g)  # error: AL105
(h.sum() + g.sum()).backward()


# case: value mlp built by appends ends with a tanh before an appended in-place relu
# runs: raises RuntimeError
import torch
from torch import nn
def mlp(sizes, activation=nn.Tanh):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        layers.append(activation())
    return layers
class Critic(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        body = mlp(sizes)
        body += [nn.ReLU(True)]  # error: AL105
        self.v = nn.Sequential(*body)
    def forward(self, obs):
        return self.v(obs).sum(-1)
critic = Critic([4, 8, 8])
critic(torch.randn(5, 4)).mean().backward()


# case: vgg features built in a loop with in-place relus after convolutions
# runs: ok
import torch
from torch import nn
def make_layers(cfg, batch_norm=False):
    layers = []
    in_channels = 3
    for v in cfg:
        if v == "M":
            layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
        else:
            conv = nn.Conv2d(in_channels, v, kernel_size=3, padding=1)
            if batch_norm:
                layers += [conv, nn.BatchNorm2d(v), nn.ReLU(inplace=True)]
            else:
                layers += [conv, nn.ReLU(inplace=True)]
            in_channels = v
    return nn.Sequential(*layers)
class VGG(nn.Module):
    def __init__(self, features, num_classes=10):
        super().__init__()
        self.features = features
        self.classifier = nn.Sequential(nn.Linear(16 * 4 * 4, 32), nn.ReLU(True), nn.Dropout(0.5),
                                        nn.Linear(32, num_classes))
    def forward(self, x):
        x = self.features(x)
        return self.classifier(torch.flatten(x, 1))
model = VGG(make_layers([8, "M", 16, "M"], batch_norm=True))
model(torch.randn(2, 3, 16, 16)).sum().backward()


# case: repeated linear relu blocks from a comprehension
# runs: ok
import torch
from torch import nn
def block(dim):
    return nn.Sequential(nn.Linear(dim, dim), nn.ReLU(inplace=True))
class Tower(nn.Module):
    def __init__(self, dim, depth):
        super().__init__()
        self.blocks = nn.Sequential(*[block(dim) for _ in range(depth)])
        self.head = nn.Linear(dim, 1)
    def forward(self, x):
        return self.head(self.blocks(x))
Tower(8, 3)(torch.randn(4, 8)).sum().backward()


# case: positional arguments bind by each activation's signature
# runs: raises RuntimeError
import torch
from torch import nn
class Gate(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.slope_true = nn.Sequential(nn.Sigmoid(), nn.LeakyReLU(True))
        self.alpha_true = nn.Sequential(nn.Sigmoid(), nn.ELU(True))
        self.in_place = nn.Sequential(nn.Sigmoid(), nn.LeakyReLU(0.2, True))  # error: AL105
    def forward(self, x):
        h = self.fc(x)
        return self.slope_true(h) + self.alpha_true(h) + self.in_place(h)
Gate(6)(torch.randn(3, 6)).sum().backward()


# case: dropout registered by name after a softmax
# runs: raises RuntimeError
import torch
from torch import nn
class Attention(nn.Module):
    def __init__(self, dim, p=0.1):
        super().__init__()
        self.qk = nn.Linear(dim, 2 * dim)
        self.add_module("attn_drop", nn.Dropout(p, True))  # error: AL105
        setattr(self, "out_drop", nn.Dropout(p))
    def forward(self, x):
        q, k = self.qk(x).chunk(2, dim=-1)
        attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        attn = getattr(self, "attn_drop")(attn)
        return getattr(self, "out_drop")(attn @ x)
Attention(8)(torch.randn(2, 5, 8)).sum().backward()


# case: perceptual slices of one stack share the boundary tensor
# runs: raises RuntimeError
import torch
from torch import nn
class Slices(nn.Module):
    def __init__(self):
        super().__init__()
        layers = [nn.Linear(6, 6), nn.Sigmoid()]
        layers.append(nn.ReLU(inplace=True))  # error: AL105
        layers.append(nn.Linear(6, 2))
        self.features = nn.Sequential(*layers)
        self.low = self.features[:2]
        self.high = self.features[2:]
    def forward(self, x):
        h = self.low(x)
        return self.high(h)
Slices()(torch.randn(3, 6)).sum().backward()


# case: optional in-place dropout appended after a tanh
# runs: raises RuntimeError
import torch
from torch import nn
def head(dim, drop):
    layers = [nn.Linear(dim, dim), nn.Tanh()]
    if drop > 0:
        layers.append(nn.Dropout(drop, inplace=True))  # error: AL105
    layers.append(nn.Linear(dim, 1))
    return nn.Sequential(*layers)
class Regressor(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.head = head(dim, 0.2)
    def forward(self, x):
        return self.head(x)
Regressor(4)(torch.randn(8, 4)).sum().backward()


# case: stage built by a classmethod of a sequential subclass rewrites features an auxiliary head saved
# runs: raises RuntimeError
import torch
from torch import nn
class Stage(nn.Sequential):
    @classmethod
    def build(cls, c_in, widths):
        layers = []
        for c_out in widths:
            layers += [nn.ReLU(inplace=True), nn.Conv2d(c_in, c_out, 3, padding=1)]  # error: AL105
            c_in = c_out
        return cls(*layers)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.aux = nn.Conv2d(8, 2, 1)
        self.stage = Stage.build(8, [8, 8])
    def forward(self, x):
        feats = self.stem(x)
        aux = self.aux(feats).mean()
        return self.stage(feats).mean() + aux
Net()(torch.randn(2, 3, 8, 8)).backward()


# case: stage of a sequential subclass after its own convolution
# runs: ok
import torch
from torch import nn
class Stage(nn.Sequential):
    @classmethod
    def build(cls, c_in, widths):
        layers = []
        for c_out in widths:
            layers += [nn.Conv2d(c_in, c_out, 3, padding=1), nn.ReLU(inplace=True)]
            c_in = c_out
        return cls(*layers)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.aux = nn.Conv2d(8, 2, 1)
        self.stage = Stage.build(8, [8, 8])
    def forward(self, x):
        feats = self.stem(x)
        return self.stage(feats).mean() + self.aux(feats).mean()
Net()(torch.randn(2, 3, 8, 8)).backward()


# case: one layer factory called for two stacks
# runs: ok
import torch
from torch import nn
def conv_bn_act(c_in, c_out):
    return [nn.Conv2d(c_in, c_out, 3, padding=1), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True)]
class TwoTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Sequential(*(conv_bn_act(3, 8) + conv_bn_act(8, 8)))
        self.b = nn.Sequential(*conv_bn_act(3, 8))
    def forward(self, x):
        return self.a(x).mean() + self.b(x).mean()
TwoTower()(torch.randn(2, 3, 8, 8)).backward()


# case: module list grown in a loop and iterated ends with a sigmoid before an in-place relu
# runs: raises RuntimeError
import torch
from torch import nn
class GatedMLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.ModuleList()
        for i in range(len(sizes) - 1):
            self.layers.append(nn.Linear(sizes[i], sizes[i + 1]))
            self.layers.append(nn.Sigmoid())
        self.layers.append(nn.ReLU(inplace=True))  # error: AL105
    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
GatedMLP([4, 8, 8])(torch.randn(3, 4)).sum().backward()


# case: module list of linear and in-place relu layers iterated
# runs: ok
import torch
from torch import nn
class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.ModuleList()
        for i in range(len(sizes) - 1):
            self.layers.append(nn.Linear(sizes[i], sizes[i + 1]))
            self.layers.append(nn.ReLU(inplace=True))
        self.layers.append(nn.Linear(sizes[-1], 1))
    def forward(self, x):
        features = []
        for layer in self.layers:
            x = layer(x)
            if isinstance(layer, nn.Linear):
                features.append(x)
        return x, features
out, _ = MLP([4, 8, 8])(torch.randn(3, 4))
out.sum().backward()


# case: resnet stages built by a make-layer method from residual blocks
# runs: ok
import torch
from torch import nn
class BasicBlock(nn.Module):
    expansion = 1
    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample
    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)
class ResNet(nn.Module):
    def __init__(self, block, layers, num_classes=10):
        super().__init__()
        self.inplanes = 8
        self.conv1 = nn.Conv2d(3, 8, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU(inplace=True)
        self.layer1 = self._make_layer(block, 8, layers[0])
        self.layer2 = self._make_layer(block, 16, layers[1], stride=2)
        self.fc = nn.Linear(16, num_classes)
    def _make_layer(self, block, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes:
            downsample = nn.Sequential(nn.Conv2d(self.inplanes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))
        layers = []
        layers.append(block(self.inplanes, planes, stride, downsample))
        self.inplanes = planes
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes))
        return nn.Sequential(*layers)
    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer2(self.layer1(x))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))
model = ResNet(BasicBlock, [2, 2])
model(torch.randn(2, 3, 8, 8)).sum().backward()


# case: a block applied in a loop clobbers what the previous iteration's tanh saved
# runs: raises RuntimeError
import torch
from torch import nn
class GatedBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
    def forward(self, x):
        h = torch.relu_(x)  # error: AL105
        return torch.tanh(self.fc(h))
blocks = nn.ModuleList([GatedBlock(16) for _ in range(3)])
x = torch.randn(10, 16, requires_grad=True) * 2
for blk in blocks:
    x = blk(x)
x.sum().backward()


# case: a block applied in a loop activates a copy of its input
import torch
from torch import nn
class GatedBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
    def forward(self, x):
        h = torch.relu(x)
        return torch.tanh(self.fc(h))
blocks = nn.ModuleList([GatedBlock(16) for _ in range(3)])
x = torch.randn(10, 16, requires_grad=True) * 2
for blk in blocks:
    x = blk(x)
x.sum().backward()


# case: a discriminator's in-place activation rewrites the detached generator output
# runs: raises RuntimeError
import torch
from torch import nn
def d_block(c_in, c_out):
    return [nn.LeakyReLU(0.2, True), nn.Conv2d(c_in, c_out, 4, 2, 1)]  # error: AL105
class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(*d_block(3, 4), nn.Flatten(), nn.LazyLinear(1))
    def forward(self, x):
        return self.main(x)
gen = nn.Sequential(nn.ConvTranspose2d(8, 3, 4, 2, 1), nn.Tanh())
disc = Discriminator()
fake = gen(torch.randn(2, 8, 4, 4))
loss_d = disc(fake.detach()).mean()
loss_g = -disc(fake).mean()
loss_g.backward()


# case: the activation given to a residual block as a value is torch.relu_
# runs: raises AssertionError
import torch
import torch.nn.functional as F
from torch import nn


class ResidualMLP(nn.Module):
    def __init__(self, dim, activation):
        super().__init__()
        self.activation = activation
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.activation(x)  # error: AL105
        return x + self.fc(h)


block = ResidualMLP(8, activation=torch.relu_)
x = torch.randn(4, 8)
with torch.no_grad():
    expected = x + block.fc(F.relu(x))
    out = block(x.clone())
assert torch.allclose(out, expected)


# case: the same block given the out-of-place torch.relu, and relu_ called by its name
import torch
from torch import nn


class ResidualMLP(nn.Module):
    def __init__(self, dim, activation):
        super().__init__()
        self.activation = activation
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.activation(x)
        return x + self.fc(h)


block = ResidualMLP(8, activation=torch.relu)
out = block(torch.randn(4, 8))
y = torch.randn(4, 8)
torch.relu_(y)
print(out, y + 1)


# case: a pre-activation block adds the input back in the same expression that rectifies it
# runs: raises AssertionError
import torch
import torch.nn.functional as F
from torch import nn


class PreActBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.act = nn.ReLU(inplace=True)  # error: AL105
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return x + self.fc(self.act(x))


class Concat(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU(inplace=True)  # error: AL105

    def forward(self, x):
        return torch.cat((x, self.act(x)), dim=1)


block = PreActBlock(8)
x = torch.randn(4, 8)
with torch.no_grad():
    expected = x + block.fc(F.relu(x))
    out = block(x.clone())
    both = Concat()(x.clone())
assert torch.equal(both[:, :8], x) and torch.allclose(out, expected)


# case: the same block with the activation out of place, or the input read first
import torch
from torch import nn


class PreActBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.act = nn.ReLU()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return x + self.fc(self.act(x))


class Summed(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        total = x.sum()
        return total + self.act(x).sum()


print(PreActBlock(8)(torch.randn(4, 8)), Summed()(torch.randn(4, 8)))


# case: heads of a module dict run in insertion order and one rewrites features another saved
# runs: raises RuntimeError
import torch
from torch import nn
class MultiHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(4, 8)
        self.heads = nn.ModuleDict({
            "logits": nn.Linear(8, 3),
            "score": nn.Sequential(nn.ReLU(inplace=True), nn.Linear(8, 1)),  # error: AL105
        })
    def forward(self, x):
        feats = self.trunk(x)
        return {name: head(feats) for name, head in self.heads.items()}
out = MultiHead()(torch.randn(2, 4))
(out["logits"].sum() + out["score"].sum()).backward()


# case: heads of a module dict picked by key each rectify a linear output of their own
# runs: ok
import torch
from torch import nn
class MultiHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(4, 8)
        self.heads = nn.ModuleDict({
            "logits": nn.Linear(8, 3),
            "score": nn.Sequential(nn.Linear(8, 8), nn.ReLU(inplace=True), nn.Linear(8, 1)),
        })
    def forward(self, x):
        feats = self.trunk(x)
        outputs = [head(feats) for head in self.heads.values()]
        return outputs[0], self.heads["score"](feats)
logits, score = MultiHead()(torch.randn(2, 4))
(logits.sum() + score.sum()).backward()


# case: norms and activations walked together with zip, an identity norm before an in-place relu
# runs: raises RuntimeError
import torch
from torch import nn
class Tower(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)
        self.norms = nn.ModuleList([nn.Identity(), nn.LayerNorm(8)])
        self.acts = nn.ModuleList([
            nn.ReLU(inplace=True),  # error: AL105
            nn.ReLU(inplace=True),
        ])
    def forward(self, x):
        x = torch.sigmoid(self.fc(x))
        for i, (norm, act) in enumerate(zip(self.norms, self.acts)):
            x = act(norm(x))
        return x
Tower()(torch.randn(2, 4)).sum().backward()


# case: norms and activations walked together with zip, each norm making a new tensor
# runs: ok
import torch
from torch import nn
class Tower(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)
        self.norms = nn.ModuleList([nn.LayerNorm(8), nn.LayerNorm(8)])
        self.acts = nn.ModuleList([nn.ReLU(inplace=True), nn.ReLU(inplace=True)])
    def forward(self, x):
        x = torch.sigmoid(self.fc(x))
        for i, (norm, act) in enumerate(zip(self.norms, self.acts)):
            x = act(norm(x))
        return x
Tower()(torch.randn(2, 4)).sum().backward()


# case: a layer factory given a list of names, its in-place layer run after a tanh
# runs: raises RuntimeError
import torch
from torch import nn
def make(name):
    if name == "relu":
        return nn.ReLU(inplace=True)
    return nn.Tanh()
def pick(names):
    return [make(name) for name in names]  # error: AL105
idle = nn.Sequential(nn.Linear(4, 4), *pick(["tanh"]))
used = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), *pick(["relu"]))
used(torch.randn(2, 4)).sum().backward()


# case: the same factory given another list of names for the stack that runs
# runs: ok
import torch
from torch import nn
def make(name):
    if name == "relu":
        return nn.ReLU(inplace=True)
    return nn.Tanh()
def pick(names):
    return [make(name) for name in names]
idle = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), *pick(["relu"]))
used = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), *pick(["tanh"]))
used(torch.randn(2, 4)).sum().backward()


# case: VGG feature slices registered with add_module in loops over literal ranges
# runs: raises AssertionError
import torch
from torch import nn


def make_features(cfg, in_channels=3):
    layers = []
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
        else:
            conv = nn.Conv2d(in_channels, v, kernel_size=3, padding=1)
            layers += [conv, nn.ReLU(inplace=True)]  # error: AL105
            in_channels = v
    return nn.Sequential(*layers)


class PreActivationFeatures(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.slice1 = nn.Sequential()
        self.slice2 = nn.Sequential()
        for i in range(3):
            self.slice1.add_module(str(i), features[i])
        for i in range(3, 6):
            self.slice2.add_module(str(i), features[i])

    def forward(self, x):
        h = self.slice1(x)
        h_conv1_2 = h
        h = self.slice2(h)
        return h_conv1_2, h


extractor = PreActivationFeatures(make_features([4, 4, "M", 8]))
with torch.no_grad():
    x = torch.randn(1, 3, 8, 8)
    kept, _ = extractor(x)
    assert torch.equal(kept, extractor.slice1(x))


# case: the same slices with the kept features cloned, and a name registered twice
import torch
from torch import nn


def make_features(cfg, in_channels=3):
    layers = []
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
        else:
            layers += [nn.Conv2d(in_channels, v, kernel_size=3, padding=1), nn.ReLU(inplace=True)]
            in_channels = v
    return nn.Sequential(*layers)


class PreActivationFeatures(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.slice1 = nn.Sequential()
        self.slice2 = nn.Sequential()
        for i in range(3):
            self.slice1.add_module(str(i), features[i])
        for i in range(3, 6):
            self.slice2.add_module(str(i), features[i])
        # The same name again replaces that child where it stands: the slice now starts
        # with an out-of-place ReLU.
        self.slice2.add_module("3", nn.ReLU())

    def forward(self, x):
        h = self.slice1(x)
        kept = h
        return kept, self.slice2(h)


extractor = PreActivationFeatures(make_features([4, 4, "M", 8]))
with torch.no_grad():
    x = torch.randn(1, 3, 8, 8)
    kept, _ = extractor(x)
    assert torch.equal(kept, extractor.slice1(x))


# case: stages registered under computed names and run through getattr in a loop
# runs: raises AssertionError
import torch
from torch import nn


def make_stage(c_in, c_out):
    return nn.Sequential(nn.ReLU(inplace=True), nn.Conv2d(c_in, c_out, 3, padding=1),  # error: AL105
                         nn.BatchNorm2d(c_out))


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.add_module("stem", nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4)))
        for i in range(1, 3):
            self.add_module(f"layer{i}", make_stage(4, 4))
        self.stage_names = ["layer1", "layer2"]

    def forward(self, x):
        outputs = {}
        x = self.stem(x)
        for name in self.stage_names:
            x = getattr(self, name)(x)
            outputs[name] = x
        return outputs


feats = Backbone()(torch.randn(2, 3, 8, 8))
# layer1 ends with a BatchNorm in training mode: negative values, unless rectified
assert feats["layer1"].min() < 0


# case: the same stages with the leading activation out of place
import torch
from torch import nn


def make_stage(c_in, c_out):
    return nn.Sequential(nn.ReLU(), nn.Conv2d(c_in, c_out, 3, padding=1), nn.BatchNorm2d(c_out))


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.add_module("stem", nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4)))
        for i in range(1, 3):
            self.add_module(f"layer{i}", make_stage(4, 4))
        self.stage_names = ["layer1", "layer2"]

    def forward(self, x):
        outputs = {}
        x = self.stem(x)
        for name in self.stage_names:
            x = getattr(self, name)(x)
            outputs[name] = x
        return outputs


feats = Backbone()(torch.randn(2, 3, 8, 8))
assert feats["layer1"].min() < 0


# case: a classifier head's Flatten is a view of the pooled embedding its in-place dropout writes
# runs: raises AssertionError
import torch
from torch import nn


class EmbeddingNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU())
        self.pool = nn.AdaptiveAvgPool2d(1)
        layers = [nn.Flatten(1)]
        layers.append(nn.Dropout(0.5, inplace=True))  # error: AL105
        layers.append(nn.Linear(16, num_classes))
        self.head = nn.Sequential(*layers)

    def forward(self, x):
        pooled = self.pool(self.features(x))
        return self.head(pooled), pooled.flatten(1)


torch.manual_seed(0)
logits, embedding = EmbeddingNet()(torch.randn(8, 3, 8, 8) + 2.0)
assert not (embedding == 0).any()


# case: the same head with the dropout out of place, and one whose input nothing else reads
import torch
from torch import nn


class EmbeddingNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU())
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Sequential(nn.Flatten(1), nn.Dropout(0.5), nn.Linear(16, num_classes))
        self.aux = nn.Sequential(nn.Flatten(1), nn.Dropout(0.5, inplace=True),
                                 nn.Linear(16, num_classes))

    def forward(self, x):
        pooled = self.pool(self.features(x))
        return self.head(pooled), pooled.flatten(1), self.aux(self.pool(x.repeat(1, 6, 1, 1)[:, :16]))


torch.manual_seed(0)
logits, embedding, aux = EmbeddingNet()(torch.randn(8, 3, 8, 8) + 2.0)
assert not (embedding == 0).any()


# case: a child registered again under the name `append` gave it takes that child's place
# runs: raises RuntimeError
import torch
from torch import nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential()
        self.body.append(nn.Linear(4, 4))
        self.body.add_module("act", nn.ReLU(inplace=True))  # error: AL105
        self.body.add_module("0", nn.Sigmoid())

    def forward(self, x):
        return self.body(x)


Head()(torch.randn(2, 4, requires_grad=True)).sum().backward()


# case: the same head with the sigmoid registered under a new name: it runs last
# runs: ok
import torch
from torch import nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential()
        self.body.append(nn.Linear(4, 4))
        self.body.add_module("act", nn.ReLU(inplace=True))
        self.body.add_module("2", nn.Sigmoid())

    def forward(self, x):
        return self.body(x)


Head()(torch.randn(2, 4, requires_grad=True)).sum().backward()
