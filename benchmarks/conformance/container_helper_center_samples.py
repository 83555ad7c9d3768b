# source: user report pattern: a preprocessing helper that centres each sample while iterating over the batch it was given (iteration yields views of the caller's tensor)
# expect: AL208 at line 9
# torch: wrong "the caller's images were centred too"
import torch


def center(batch):
    for sample in batch:
        sample.sub_(sample.mean())
    return batch


torch.manual_seed(0)
images = torch.rand(4, 3, 2, 2)
centered = center(images)
brightness = images.mean(dim=(1, 2, 3))
if not (brightness > 0.1).all():
    raise SystemExit(1)
