# source: user report pattern: a helper normalises its argument in place
# expect: AL208 at line 8
# torch: wrong "the caller's tensor changed"
import torch


def standardise(batch):
    batch -= batch.mean()
    return batch / batch.std()


raw = torch.tensor([1.0, 2.0, 3.0])
scaled = standardise(raw)
if raw.mean().item() != 2.0:
    raise SystemExit(1)
