# source: https://github.com/pytorch/examples/blob/61176010ea6cfebc8127be8f965424d5f1838387/word_language_model/model.py @ 61176010ea6cfebc8127be8f965424d5f1838387
# expect: AL101 at line 24
# torch: raises RuntimeError "modified by an inplace operation"
import torch
from torch import nn


def last_step(seq):
    """The final time step of a (batch, time, features) sequence."""
    return seq[:, -1]


class Tagger(nn.Module):
    def __init__(self, vocab=20, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.RNN(dim, dim, batch_first=True)
        self.decoder = nn.Linear(dim, vocab)

    def forward(self, tokens):
        h = torch.tanh(self.embed(tokens))
        out, _ = self.rnn(h)
        summary = last_step(h)
        summary.mul_(0.5)
        return self.decoder(out + summary[:, None])


def step(model, tokens):
    logits = model(tokens)
    loss = nn.functional.cross_entropy(logits.reshape(-1, 20), tokens.reshape(-1))
    loss.backward()


torch.manual_seed(0)
step(Tagger(), torch.randint(0, 20, (2, 5)))
