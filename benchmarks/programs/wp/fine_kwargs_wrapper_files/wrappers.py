import time

from torch import nn


class Profiled(nn.Module):
    """Times any module; its arguments are passed on as given."""

    def __init__(self, module):
        super().__init__()
        self.module = module
        self.seconds = 0.0

    def forward(self, *args, **kwargs):
        start = time.perf_counter()
        out = self.module(*args, **kwargs)
        self.seconds += time.perf_counter() - start
        return out
