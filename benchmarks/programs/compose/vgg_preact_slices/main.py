# source: https://github.com/pytorch/examples/blob/77f55b912142e11fcfdf5b530231fb9c52f181e8/fast_neural_style/neural_style/vgg.py @ 77f55b912142e11fcfdf5b530231fb9c52f181e8
# expect: AL105 at vgg.py:15
# torch: wrong "the kept conv1_2 features are rectified by the next slice's in-place ReLU"
# The first slice ends at a conv; the second starts with that conv's ReLU(inplace=True) and overwrites the kept features.
import torch

from perceptual import PreActivationFeatures, style_loss
from vgg import vgg_features

torch.manual_seed(0)
extractor = PreActivationFeatures(vgg_features())
output = torch.rand(2, 3, 16, 16, requires_grad=True)
target = torch.rand(2, 3, 16, 16)

loss = style_loss(extractor, output, target)
loss.backward()

with torch.no_grad():
    kept, _ = extractor(target)
    fresh = extractor.slice1(target)
if not torch.equal(kept, fresh):
    raise SystemExit(1)
print("style loss", loss.item())
