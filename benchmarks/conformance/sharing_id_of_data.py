# source: https://github.com/zhangfaen/python-pytorch-tips (id() of temporary wrapper objects is reused)
# expect: AL401 at line 8
# torch: wrong "id() said two unrelated tensors share their data"
import torch

weights = torch.zeros(3)
buffer = torch.ones(3)
if id(weights.data) == id(buffer.data):
    raise SystemExit(1)
