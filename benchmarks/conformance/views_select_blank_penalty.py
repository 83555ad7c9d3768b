# source: pytorch/pytorch test/test_view_ops.py TestViewOps.test_select_view (torch.select returns a view), here a blank-token penalty meant only for greedy decoding
# expect: AL201 at line 10
# torch: wrong "the logits used for the loss were penalised too"
import torch

torch.manual_seed(0)
logits = torch.randn(5, 4)
raw = logits.clone()
blank = torch.select(logits, 1, 0)
blank.sub_(2.0)
decoded = logits.argmax(dim=1)
loss = torch.nn.functional.cross_entropy(logits, torch.zeros(5, dtype=torch.long))
if not torch.equal(logits, raw):
    raise SystemExit(1)
