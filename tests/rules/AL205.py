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
