# source: https://github.com/pytorch/examples/blob/493da9304e56ff5160f78d01a54992db35df2a98/imagenet/main.py @ 493da9304e56ff5160f78d01a54992db35df2a98
# expect: none
# torch: ok
import functools
import time

import torch


def timed(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        result = fn(*args, **kwargs)
        wrapper.seconds += time.perf_counter() - start
        return result

    wrapper.seconds = 0.0
    return wrapper


@timed
def jitter(images, strength=0.2):
    noise = torch.randn_like(images) * strength
    return images + noise


def consistency_batch(images):
    noisy = jitter(images)
    return noisy, images


torch.manual_seed(0)
batch = torch.rand(4, 3, 8, 8)
noisy, clean = consistency_batch(batch)
if torch.equal(noisy, clean):
    raise SystemExit(1)
