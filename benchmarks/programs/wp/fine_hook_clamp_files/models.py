from torch import nn


class RecurrentEncoder(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.proj = nn.Linear(dim, dim)
        self.act = nn.Tanh()
        self.out = nn.Linear(dim, dim)

    def forward(self, tokens):
        h = self.act(self.proj(self.embed(tokens)))
        return self.out(h.mean(dim=1))
