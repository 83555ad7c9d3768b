# source: https://pytorch.org/vision/stable/generated/torchvision.transforms.functional.normalize.html (normalize(tensor, mean, std, inplace=False)); the call site passes inplace=False
# expect: none
# torch: ok
import torch


def normalize(x, mean, std, inplace=False):
    if inplace:
        return x.sub_(mean).div_(std)
    return (x - mean) / std


torch.manual_seed(0)
images = torch.rand(2, 3, 4, 4)
before = images.clone()
inputs = normalize(images, 0.5, 0.25, inplace=False)
if not torch.equal(images, before):
    raise SystemExit(1)
