"""AL101 inplace-on-saved-tensor: its positive and negative cases (format: tests/test_rules.py)."""


# case: sigmoid result written
# runs: raises RuntimeError
import torch
w = torch.randn(3, requires_grad=True)
y = torch.sigmoid(w)
y.mul_(2)  # error: AL101
y.sum().backward()


# case: write through a view
# runs: raises RuntimeError
import torch
w = torch.randn(3, requires_grad=True)
y = w.exp()
view = y[1:]
view.zero_()  # error: AL101
loss = y.sum()
loss.backward()


# case: item assignment
# runs: raises RuntimeError
import torch
w = torch.randn(3, requires_grad=True)
y = torch.tanh(w)
y[0] = 0.0  # error: AL101
y.sum().backward()


# case: out argument
import torch
w = torch.randn(3, requires_grad=True)
y = torch.exp(w)
z = torch.empty(3)
torch.add(w, 1, out=y)  # error: AL101
y.sum().backward()


# case: retain graph keeps the saves
# runs: raises RuntimeError
import torch
w = torch.randn(3, requires_grad=True)
y = w.sigmoid()
loss = y.sum()
loss.backward(retain_graph=True)
y += 1  # error: AL101
loss.backward()


# case: optimizer step before backward
import torch
from torch import nn
net = nn.Sequential(nn.Linear(2, 2), nn.Sigmoid())
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.randn(4, 2, requires_grad=True)
loss = net(x).sum()
opt.step()  # error: AL101
loss.backward()


# case: write inside a local function
# runs: raises RuntimeError
import torch
def scale_(t):
    t.mul_(2)  # error: AL101
w = torch.randn(3, requires_grad=True)
y = w.sigmoid()
scale_(y)
y.sum().backward()


# case: loop carried
# runs: raises RuntimeError
import torch
W = torch.randn(4, 4, requires_grad=True)
h = torch.zeros(4)
for _ in range(3):
    h = torch.tanh(W @ h)
    h.add_(1)  # error: AL101
h.sum().backward()


# case: second inplace op on a saved result
import torch
from torch import nn
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU(inplace=True)
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        x = self.act(self.fc(x))
        h = x.mul_(0.5)  # error: AL101
        return h + x


# case: nothing requires grad
import torch
x = torch.randn(3)
y = torch.sigmoid(x)
y.mul_(2)


# case: write after backward
# runs: ok
import torch
w = torch.randn(3, requires_grad=True)
y = torch.sigmoid(w)
loss = y.sum()
loss.backward()
y.mul_(2)


# case: decorated grad off
import torch
w = torch.randn(3, requires_grad=True)
@torch.no_grad()
def update(p: torch.Tensor):
    p.add_(1)
@torch.inference_mode()
def infer():
    y = torch.sigmoid(w)
    y.mul_(2)
    return y


# case: no backward follows
import torch
w = torch.randn(3, requires_grad=True)
y = torch.exp(w)
y.add_(1)


# case: op that saves nothing needed
import torch
w = torch.randn(3, requires_grad=True)
y = w * 2
y.mul_(3)
y.sum().backward()


# case: no visible backward
import torch
def helper(loss):
    pass
w = torch.randn(3, requires_grad=True)
y = w.sigmoid()
helper(y.sum())
y.mul_(2)


# case: rebound on every path
import torch
w = torch.randn(3, requires_grad=True)
y = w.sigmoid()
if y.sum() > 0:
    y = y * 2
else:
    y = y + 1
y.add_(1)
y.sum().backward()


# case: train step on values its call site passes
# runs: raises RuntimeError
import torch
from torch import nn
def train_step(model, opt, x):
    model(x).sum().backward()
    out = model(x)
    opt.step()  # error: AL101
    out.sum().backward()
mlp = nn.Sequential(nn.Linear(5, 5), nn.Tanh(), nn.Linear(5, 1))
train_step(mlp, torch.optim.SGD(mlp.parameters(), lr=0.1), torch.randn(4, 5))


# case: public helper analysed with a library caller's values is low confidence
import torch
from torch import nn
def train_step(model, opt, x):
    model(x).sum().backward()
    out = model(x)
    opt.step()  # low: AL101
    out.sum().backward()
def fit(x):
    mlp = nn.Sequential(nn.Linear(5, 5), nn.Tanh(), nn.Linear(5, 1))
    train_step(mlp, torch.optim.SGD(mlp.parameters(), lr=0.1), x)


# case: item assignment carries the value's graph
# runs: raises RuntimeError
import torch
gain = torch.tensor(0.5, requires_grad=True)
state = torch.zeros(5, 2)
state[1] = state[0] * gain  # error: AL101
state.pow(2).sum().backward()


# case: copy into a buffer carries the source's graph
# runs: raises RuntimeError
import torch
w = torch.randn(3, requires_grad=True)
buf = torch.zeros(3)
buf.copy_(w * 2)
y = buf.pow(2)
buf.add_(1.0)  # error: AL101
y.sum().backward()


# case: loss divided in place for accumulation over a loader batch
# runs: raises RuntimeError
import torch
import torch.nn.functional as F
from torch import nn
model = nn.Linear(4, 1)
loader = [(torch.randn(8, 4), torch.randn(8, 1))]
accum_steps = 4
for xb, yb in loader:
    loss = torch.sqrt(F.mse_loss(model(xb), yb))
    loss /= accum_steps  # error: AL101
    loss.backward()


# case: step before the second backward in a loader loop
# runs: raises RuntimeError
import torch
from torch import nn
device = "cpu"
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1)).to(device)
opt = torch.optim.Adam(model.parameters())
for batch in [torch.randn(2, 4)]:
    out = model(batch.to(device))
    aux = out.pow(2).mean()
    out.mean().backward(retain_graph=True)
    opt.step()  # error: AL101
    aux.backward()


# case: GAN update with a gradient scaler
# runs: raises RuntimeError
import torch
from torch import nn
gen = nn.Linear(4, 4)
disc = nn.Sequential(nn.Linear(4, 1), nn.Sigmoid())
opt_d = torch.optim.SGD(disc.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
fake = gen(torch.randn(2, 4))
d_loss = disc(fake.detach()).mean()
g_loss = -disc(fake).mean()
scaler.scale(d_loss).backward()
scaler.step(opt_d)  # error: AL101
scaler.update()
scaler.scale(g_loss).backward()


# case: accelerate prepares the objects it is given
import torch
from torch import nn
from accelerate import Accelerator
accelerator = Accelerator()
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
opt = torch.optim.AdamW(model.parameters())
model, opt = accelerator.prepare(model, opt)
accelerator.backward(model(torch.randn(2, 4)).sum())
out = model(torch.randn(2, 4))
opt.step()  # error: AL101
accelerator.backward(out.sum())


# case: lightning manual optimisation steps before the backward
import torch
from torch import nn
import lightning as L
class GAN(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.disc = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    def training_step(self, batch):
        self.manual_backward(self.disc(batch).mean())
        score = self.disc(batch)
        opt = torch.optim.SGD(self.disc.parameters(), lr=0.1)
        opt.step()  # error: AL101
        self.manual_backward(score.mean())


# case: name bound in a loop body is read after the loop
# runs: raises RuntimeError
import torch
x = torch.randn(3, requires_grad=True)
for _ in range(3):
    h = torch.exp(x)
h.add_(1)  # error: AL101
h.sum().backward()


# case: compiled module keeps its parameters
import torch
from torch import nn
net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
compiled = torch.compile(net)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
compiled(torch.randn(3, 4)).sum().backward()
loss = compiled(torch.randn(3, 4)).sum()
opt.step()  # error: AL101
loss.backward()


# case: a frozen file assumes nothing about module outputs
import torch
from torch import nn
model = nn.Linear(4, 1)
for p in model.parameters():
    p.requires_grad = False
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x in [torch.randn(2, 4)]:
    out = model(x)
    opt.step()
    out.sum()


# case: module handed to an unknown function first
import torch
from torch import nn
from somewhere import prepare_for_inference
model = nn.Linear(4, 1)
prepare_for_inference(model)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x in [torch.randn(2, 4)]:
    out = model(x)
    opt.step()
    out.sum().backward()


# case: deep-copied EMA model is separate storage
# runs: ok
import copy
import torch
from torch import nn
model = nn.Linear(4, 1)
ema = copy.deepcopy(model)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x in [torch.randn(2, 4)]:
    target = ema(x)
    loss = (model(x) - target.detach()).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        for pe, pm in zip(ema.parameters(), model.parameters()):
            pe.mul_(0.99).add_(pm, alpha=0.01)


# case: the backward pass proves its input required grad
import torch
def score(w, x):
    h = torch.exp(x @ w)
    h.clamp_(max=10.0)  # error: AL101
    h.sum().backward()


# case: the backward pass proves it when the function is called too
# runs: raises RuntimeError
import torch
def score(w, x):
    h = torch.exp(x @ w)
    h.clamp_(max=10.0)  # error: AL101
    h.sum().backward()
score(torch.randn(3, 3, requires_grad=True), torch.randn(2, 3))


# case: a backward through a product proves nothing about either factor
# runs: ok
import torch
def blend(h, w: torch.Tensor, x):
    h = torch.exp(x)
    h.clamp_(max=10.0)
    (h * w).sum().backward()
blend(None, torch.randn(3, requires_grad=True), torch.randn(3))


# case: a returned result proves nothing either
import torch
def activate(x):
    h = torch.exp(x)
    h.clamp_(max=10.0)
    return h


# case: a write to a saved tensor inside a non-reentrant checkpoint
# runs: ok
import torch
from torch.utils.checkpoint import checkpoint
def block(x):
    h = x.sigmoid()
    h.mul_(2.0)  # error: AL101
    return h
x = torch.randn(3, requires_grad=True)
checkpoint(block, x, use_reentrant=False).sum().backward()


# case: the function handed to jacobian receives inputs that require grad
# runs: raises RuntimeError
import torch
def energy(x):
    y = x.sigmoid()
    y.add_(1)  # error: AL101
    return y.sum()
torch.autograd.functional.jacobian(energy, torch.randn(3))


# case: vmap inputs do not require grad
# runs: ok
import torch
def energy(x):
    y = x.sigmoid()
    y.add_(1)
    return y.sum()
torch.vmap(energy)(torch.randn(2, 3))


# case: a plain class called through its call method
# runs: raises RuntimeError
import torch
class Energy:
    def __init__(self, w):
        self.w = w
    def __call__(self, x):
        y = torch.exp(x * self.w)
        y.add_(1.0)  # error: AL101
        return y.sum()
energy = Energy(torch.randn(3, requires_grad=True))
energy(torch.randn(3)).backward()


# case: a cache written each step and read by that step's attention
# runs: ok
import torch
from torch import nn
proj = nn.Linear(8, 8)
cache = torch.zeros(4, 8)
for t in range(4):
    k = proj(torch.randn(1, 8))
    cache[t] = k[0]
    att = (cache[: t + 1] @ k.t()).softmax(0)
att.sum().backward()


# case: a model built elsewhere, stepped between its forward and backward
import torch
from models import build_model
model = build_model()
opt = torch.optim.Adam(model.parameters())
for x, y in [(torch.randn(2, 4), torch.randn(2, 1))]:
    out = model(x)
    opt.step()  # low: AL101
    (out - y).pow(2).mean().backward()


# case: buffers made like a parameter do not require grad
# runs: ok
import torch
w = torch.randn(3, requires_grad=True)
buf = torch.zeros_like(w)
noise = torch.randn_like(w)
z = torch.sin(buf) + torch.cos(noise)
buf.add_(1.0)
noise.mul_(0.5)
mask = w > 0
m = torch.exp(mask.float())
(z * w).sum().backward()


# case: loss module saves the model output
# runs: raises RuntimeError
import torch
from torch import nn
model = nn.Linear(4, 1)
criterion = nn.MSELoss()
x, y = torch.randn(8, 4), torch.randn(8, 1)
pred = model(x)
loss = criterion(pred, y)
pred.clamp_(-1.0, 1.0)  # error: AL101
loss.backward()


# case: function forms of tensor methods
# runs: raises RuntimeError
import torch
import torch.nn.functional as F
w = torch.randn(4, 4, requires_grad=True)
h = w * 2.0
energy = torch.pow(h, 2).sum()
h.add_(1.0)  # error: AL101
energy.backward()
u = w * 3.0
unit = F.normalize(u, dim=-1)
u.mul_(0.5)  # error: AL101
unit.sum().backward()


# case: logits loss saves its input
# runs: raises RuntimeError
import torch
import torch.nn.functional as F
from torch import nn
head = nn.Linear(6, 3)
logits = head(torch.randn(5, 6))
targets = torch.rand(5, 3)
loss = F.binary_cross_entropy_with_logits(logits, targets)
logits.sigmoid_()  # error: AL101
loss.backward()


# case: fused attention saves its output
# runs: raises RuntimeError
import torch
import torch.nn.functional as F
from torch import nn
proj = nn.Linear(16, 48)
q, k, v = proj(torch.randn(2, 4, 8, 16)).split(16, dim=-1)
ctx = F.scaled_dot_product_attention(q, k, v)
ctx.mul_(2.0)  # error: AL101
ctx.sum().backward()


# case: recurrent output written in place
# runs: raises RuntimeError
import torch
from torch import nn
lstm = nn.LSTM(4, 4)
seq, (h, c) = lstm(torch.randn(3, 2, 4))
seq.mul_(2)  # error: AL101
seq.sum().backward()


# case: overloads that do not save the written input
# runs: ok
import torch
w = torch.randn(4, 4, requires_grad=True)
h = w * 2.0
values, indices = torch.max(h, 1)
h.add_(1.0)
values.sum().backward()
a = torch.randn(4, 4, requires_grad=True)
b = torch.randn(4, 4)
prod = torch.mul(a, b)
a2 = a * 1.0
s = torch.mm(a2, b)
a2.zero_()
(prod.sum() + s.sum()).backward()


# case: lightning automatic optimisation runs backward on the returned loss
import torch
import torch.nn.functional as F
from torch import nn
import lightning as L
class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.sqrt(F.mse_loss(self.net(x), y))
        loss /= 2  # error: AL101
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


# case: lightning manual optimisation steps the discriminator too early
import torch
import torch.nn.functional as F
from torch import nn
import lightning as L
class GAN(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False
        self.gen = nn.Linear(4, 4)
        self.disc = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))

    def training_step(self, batch, batch_idx):
        opt_g, opt_d = self.optimizers()
        fake = self.gen(batch)
        d_loss = self.disc(fake.detach()).mean() - self.disc(batch).mean()
        g_loss = -self.disc(fake).mean()
        self.manual_backward(d_loss)
        opt_d.step()  # error: AL101
        self.manual_backward(g_loss)
        opt_g.step()

    def configure_optimizers(self):
        return (torch.optim.Adam(self.gen.parameters()), torch.optim.Adam(self.disc.parameters()))


# case: lightning manual optimisation in the right order
import torch
from torch import nn
import lightning as L
class GAN(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False
        self.gen = nn.Linear(4, 4)
        self.disc = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    def training_step(self, batch, batch_idx):
        opt_g, opt_d = self.optimizers()
        fake = self.gen(batch)
        d_loss = self.disc(fake.detach()).mean() - self.disc(batch).mean()
        self.manual_backward(d_loss)
        opt_d.step()
        g_loss = -self.disc(fake).mean()
        self.manual_backward(g_loss)
        opt_g.step()
    def configure_optimizers(self):
        return (torch.optim.Adam(self.gen.parameters()), torch.optim.Adam(self.disc.parameters()))


# case: loss accumulated from a number over a loop that overwrites a cache
# runs: raises RuntimeError
import torch
from torch import nn
proj = nn.Linear(4, 4)
cache = torch.zeros(3, 4)
loss = 0.0
for step in range(3):
    q = proj(torch.randn(1, 4))
    cache[step] = q.detach()[0]  # error: AL101
    loss = loss + (q @ cache.t()).sum()
loss.backward()


# case: autocast saves cast copies of the weights
# runs: ok
import torch
from torch import nn
gen = nn.Linear(4, 4)
disc = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
opt_g = torch.optim.SGD(gen.parameters(), lr=0.1)
opt_d = torch.optim.SGD(disc.parameters(), lr=0.1)
real = torch.randn(8, 4)
with torch.autocast("cpu", dtype=torch.bfloat16):
    fake = gen(torch.randn(8, 4))
    d_loss = disc(fake.detach()).float().mean() - disc(real).float().mean()
    g_loss = -disc(fake).float().mean()
d_loss.backward()
opt_d.step()
g_loss.backward()
opt_g.step()


# case: results saved under autocast are still the tensors written
# runs: raises RuntimeError
import torch
from torch import nn
lin = nn.Linear(4, 4)
with torch.autocast("cpu", dtype=torch.bfloat16):
    probs = torch.sigmoid(lin(torch.randn(2, 4)))
probs.mul_(2)  # error: AL101
probs.float().sum().backward()


# case: saved tensor hooks turn the version check off
# runs: ok
import torch
w = torch.randn(3, requires_grad=True)
x = w * 1.0
with torch.autograd.graph.save_on_cpu():
    x2 = x * 1.0
    z = (x2 * w).sum()
x2.add_(1)
z.backward()


# case: a mask applied after the convolutions of a stack iterated layer by layer
# runs: ok
import torch
from torch import nn
class Subsampling(nn.Module):
    def __init__(self, channels=2):
        super().__init__()
        self.layers = nn.ModuleList([nn.Conv2d(1, channels, 3, padding=1), nn.ReLU(),
                                     nn.Conv2d(channels, channels, 1), nn.ReLU()])
    def forward(self, x, mask):
        h = x
        for layer in self.layers:
            h = layer(h)
            if isinstance(layer, nn.Conv2d) and mask is not None:
                h *= mask
        return h
model = Subsampling()
model(torch.randn(2, 1, 4, 4), torch.ones(1, 1, 4, 4)).sum().backward()


# case: attention maps made by a dict comprehension, rescaled through a shallow copy (which
# element a key picks is not known: low)
# runs: raises RuntimeError
import torch
from torch import nn


class LevelAttention(nn.Module):
    def __init__(self, levels, channels=4):
        super().__init__()
        self.convs = nn.ModuleDict({name: nn.Conv2d(channels, 1, 1) for name in levels})

    def forward(self, feats):
        return {name: torch.sigmoid(conv(feats[name])) for name, conv in self.convs.items()}


def reweight(maps, weights):
    out = dict(**maps)
    for name, w in weights.items():
        out[name].mul_(w)  # low: AL101
    return out


feats = {name: torch.randn(1, 4, 8, 8, requires_grad=True) for name in ("p3", "p4")}
maps = reweight(LevelAttention(["p3", "p4"])(feats), {"p3": 1.0, "p4": 0.5})
sum(m.sum() for m in maps.values()).backward()


# case: the same maps, each one copied before it is scaled
import torch


def reweight(maps, weights):
    out = {name: m.clone() for name, m in maps.items()}
    for name, w in weights.items():
        out[name].mul_(w)
    return out


feats = {name: torch.randn(1, 4, 8, 8, requires_grad=True) for name in ("p3", "p4")}
maps = reweight({name: torch.sigmoid(f) for name, f in feats.items()}, {"p3": 1.0, "p4": 0.5})
sum(m.sum() for m in maps.values()).backward()


# case: a recurrent policy returns (logits, state); a helper resets the state in place
# runs: raises RuntimeError
import torch
from torch import nn


class Policy(nn.Module):
    def __init__(self, obs_dim=5, hidden=8, actions=3):
        super().__init__()
        self.ih = nn.Linear(obs_dim, hidden)
        self.hh = nn.Linear(hidden, hidden)
        self.pi = nn.Linear(hidden, actions)

    def forward(self, obs, h):
        h = torch.tanh(self.ih(obs) + self.hh(h))
        return self.pi(h), h


def reset_finished(h, done):
    h.mul_((1.0 - done).unsqueeze(-1))  # error: AL101
    return h


policy = Policy()
h = torch.zeros(4, 8)
logps = []
for step in range(3):
    logits, h = policy(torch.randn(4, 5), h)
    logps.append(logits.log_softmax(-1)[:, 0])
    h = reset_finished(h, (torch.rand(4) < 0.5).float())
(-sum(lp.mean() for lp in logps)).backward()


# case: the same rollout, the state reset out of place
import torch
from torch import nn


class Policy(nn.Module):
    def __init__(self, obs_dim=5, hidden=8, actions=3):
        super().__init__()
        self.ih = nn.Linear(obs_dim, hidden)
        self.pi = nn.Linear(hidden, actions)

    def forward(self, obs, h):
        h = torch.tanh(self.ih(obs) + h)
        return self.pi(h), h


policy = Policy()
h = torch.zeros(4, 8)
logps = []
for step in range(3):
    logits, h = policy(torch.randn(4, 5), h)
    logps.append(logits.log_softmax(-1)[:, 0])
    h = h * (1.0 - (torch.rand(4) < 0.5).float()).unsqueeze(-1)
(-sum(lp.mean() for lp in logps)).backward()
