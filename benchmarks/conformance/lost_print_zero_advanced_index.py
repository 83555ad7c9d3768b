# source: https://github.com/pytorch/pytorch/issues/80945 (an in-place op on a bool-mask index changes nothing), here the result only printed
# expect: AL204 at line 9
# torch: wrong "the negative logits are still negative"
import torch

torch.manual_seed(0)
logits = torch.randn(6)
neg = logits < 0
print(logits[neg].zero_())
if (logits < 0).any():
    raise SystemExit(1)
