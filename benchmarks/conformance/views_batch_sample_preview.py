# source: user report pattern: standardising one sample of a batch for display through a named index view changes the batch
# expect: AL201 at line 10
# torch: wrong "the training batch changed through the preview"
import torch

torch.manual_seed(0)
batch = torch.rand(4, 3, 8, 8)
original = batch.clone()
preview = batch[0]
preview.sub_(preview.mean()).div_(preview.std())
if not torch.equal(batch, original):
    raise SystemExit(1)
