"""AL205 ambiguous-alias-write: its positive and negative cases (format: tests/test_rules.py)."""


# case: argument and read later
import torch
def scale(images: torch.Tensor) -> torch.Tensor:
    x = images.float()
    x.div_(255.0)  # error: AL205
    return x
t = torch.rand(3)
flat = t.reshape(-1)
flat.clamp_(0.1)  # error: AL201
print(t)


# case: explicit conversion and out of place
import torch
def to_float(image: torch.Tensor, dtype) -> torch.Tensor:
    return image.to(dtype).mul_(2)
def scale(images: torch.Tensor) -> torch.Tensor:
    return images.float().div(255.0)
t = torch.rand(3)
y = t.reshape(-1).clone().clamp_(0.1)


# case: uint8 argument at the only call site
# runs: ok
import torch
def to_unit(img):
    img = img.float()
    img /= 255.0
    return img
raw = torch.randint(0, 256, (3, 8, 8), dtype=torch.uint8)
out = to_unit(raw)
assert raw.dtype == torch.uint8 and out.max().item() <= 1.0


# case: float32 argument at the only call site
# runs: ok
import torch
def to_unit(img):
    img = img.float()
    img /= 255.0  # error: AL205
    return img
raw = torch.rand(3, 8, 8) * 255.0
out = to_unit(raw)
assert out is raw and raw.max().item() <= 1.0


# case: call sites of a uint8 and a float32 tensor
# runs: ok
import torch
def to_unit(img):
    img = img.float()
    img /= 255.0  # error: AL205
    return img
frames = to_unit(torch.zeros(3, dtype=torch.uint8))
scores = to_unit(torch.ones(3))


# case: tensor of a known dtype returned by a function
# runs: ok
import torch
def make_mask():
    return torch.zeros(4, dtype=torch.uint8)
def make_scores():
    return torch.zeros(4, dtype=torch.float32)
mask = make_mask()
weights = mask.float()
weights.add_(1)
scores = make_scores()
shifted = scores.float()
shifted.add_(1)  # error: AL205
assert mask.sum().item() == 0 and scores.sum().item() == 4


# case: uint8 array returned by a loader
# runs: ok
import numpy as np
import torch
def load_frame(h, w):
    frame = np.zeros((h, w, 3), dtype=np.uint8)
    frame[:, :, 0] = 255
    return frame
frame = load_frame(4, 5)
pixels = torch.from_numpy(frame).permute(2, 0, 1).float().div_(255.0)
assert frame[0, 0, 0] == 255 and pixels.max().item() == 1.0


# case: float32 array returned by a loader
# runs: ok
import numpy as np
import torch
def load_frame(h, w):
    frame = np.zeros((h, w, 3), dtype=np.float32)
    frame[:, :, 0] = 255
    return frame
frame = load_frame(4, 5)
pixels = torch.from_numpy(frame).float().div_(255.0)  # error: AL301
assert frame[0, 0, 0] == 1.0


# case: random generator sampling a uint8 frame
# runs: ok
import numpy as np
import torch
def load(h, w):
    rng = np.random.default_rng(0)
    return rng.integers(0, 255, size=(h, w, 3), dtype=np.uint8)
def noise(h, w):
    rng = np.random.default_rng(1)
    return rng.integers(0, 255, (h, w), np.uint8)
frame = load(4, 5)
pixels = torch.from_numpy(frame).permute(2, 0, 1).float().div_(255.0)
grain = noise(4, 5)
scaled = torch.from_numpy(grain).float().mul_(2.0)
assert frame.dtype == np.uint8 and grain.dtype == np.uint8 and pixels.max().item() <= 1.0


# case: random generator sampling a float32 frame
# runs: ok
import numpy as np
import torch
def load(h, w):
    rng = np.random.default_rng(0)
    return rng.random(size=(h, w, 3), dtype=np.float32)
frame = load(4, 5)
before = frame.copy()
pixels = torch.from_numpy(frame).float().div_(255.0)  # error: AL301
assert (frame < before).any()
