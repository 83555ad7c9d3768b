# source: pytorch/pytorch test/cpp/api/inference_mode.cpp InferenceModeTest.TestMixInferenceAndNormalTensorInplaceOp (the same out= call made where nothing is differentiated)
# expect: none
# torch: ok
import torch
from torch import nn


class Lookup(nn.Module):
    def __init__(self, vocab, dim, batch):
        super().__init__()
        self.table = nn.Embedding(vocab, dim)
        self.register_buffer("staging", torch.empty(batch, dim))

    @torch.no_grad()
    def forward(self, ids):
        # Serving only: no gradient is wanted, so the out= gather is allowed.
        torch.index_select(self.table.weight, 0, ids, out=self.staging)
        return self.staging


torch.manual_seed(0)
lookup = Lookup(50, 8, 6)
rows = lookup(torch.randint(0, 50, (6,)))
print(rows.shape)
