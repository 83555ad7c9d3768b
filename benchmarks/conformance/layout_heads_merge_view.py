# source: user report pattern: merging attention heads with permute(...).view(batch, -1) ("view size is not compatible ... Use .reshape(...) instead")
# expect: AL202 at line 9
# torch: raises RuntimeError "view size is not compatible"
import torch

torch.manual_seed(0)
attn = torch.rand(2, 4, 5, 8)
per_token = attn.permute(0, 2, 1, 3)
merged = per_token.view(2, -1)
print(merged.shape)
