# source: user report pattern: optional tensor arguments tested with `is None` (not a sharing check)
# expect: none
# torch: ok
import torch


def masked_mean(x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    if mask is None:
        return x.mean()
    return (x * mask).sum() / mask.sum()


values = torch.tensor([1.0, 2.0, 3.0])
assert masked_mean(values).item() == 2.0
assert masked_mean(values, torch.tensor([1.0, 0.0, 1.0])).item() == 2.0
