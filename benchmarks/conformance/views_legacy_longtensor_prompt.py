# source: user report pattern: token ids built with the legacy torch.LongTensor([...]) constructor, a prefix sliced off for display and edited
# expect: AL201 at line 8
# torch: wrong "the model input lost its [CLS] token"
import torch

ids = torch.LongTensor([101, 7592, 2088, 102, 0, 0])
prompt = ids[:4]
prompt[0] = 0
attention = (ids != 0).long()
if ids[0].item() != 101:
    raise SystemExit(1)
