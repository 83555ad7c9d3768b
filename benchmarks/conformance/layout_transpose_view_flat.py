# source: user report pattern: "view size is not compatible with input tensor's size and stride" when flattening a transposed matrix column by column with view(-1)
# expect: AL202 at line 7
# torch: raises RuntimeError "view size is not compatible"
import torch

confusion = torch.arange(12.0).reshape(3, 4)
by_column = confusion.t().view(-1)
print(by_column[:3])
