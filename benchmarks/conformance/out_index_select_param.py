# source: pytorch/pytorch test/cpp/api/inference_mode.cpp InferenceModeTest.TestMixInferenceAndNormalTensorInplaceOp (an out= call whose input requires grad, with grad mode on)
# expect: AL106 at line 17
# torch: raises RuntimeError "functions with out=... arguments don't support automatic differentiation"
import torch
from torch import nn


class Lookup(nn.Module):
    def __init__(self, vocab, dim, batch):
        super().__init__()
        self.table = nn.Embedding(vocab, dim)
        # A staging buffer reused by every call, to avoid an allocation per batch.
        self.register_buffer("staging", torch.empty(batch, dim))

    def forward(self, ids):
        # The gathered rows land in the buffer; the table's weight requires grad.
        torch.index_select(self.table.weight, 0, ids, out=self.staging)
        return self.staging


torch.manual_seed(0)
lookup = Lookup(50, 8, 6)
rows = lookup(torch.randint(0, 50, (6,)))
print(rows.shape)
