# source: pytorch/pytorch test/test_view_ops.py TestViewOps.test_unfold_view (unfold returns a view: a write through it reaches the base), here a normalised-pixel target for masked-image modelling built in place
# expect: AL201 at line 22
# torch: wrong "the encoder's input images were centred along with the target"
import torch
from torch import nn

PATCH = 4


def raw_batches(count):
    return [torch.rand(2, 8, 8) for _ in range(count)]


torch.manual_seed(0)
encoder, decoder = nn.Linear(64, 32), nn.Linear(32, 64)
opt = torch.optim.SGD([*encoder.parameters(), *decoder.parameters()], lr=0.1)
batches = raw_batches(2)
for images in batches:
    # (2, 2, 2, PATCH, PATCH): the 4x4 patches of each 8x8 image, over the images' memory.
    patches = images.unfold(1, PATCH, PATCH).unfold(2, PATCH, PATCH)
    # The target is each patch minus its mean pixel.
    patches -= patches.mean(dim=(-2, -1), keepdim=True)
    target = patches.reshape(2, 64)
    recon = decoder(encoder(images.reshape(2, 64)))
    loss = nn.functional.mse_loss(recon, target)
    opt.zero_grad()
    loss.backward()
    opt.step()
if batches[0].min() < 0.0:
    raise SystemExit(1)
