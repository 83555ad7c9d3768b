"""AL404 typed-storage: its positive and negative cases (format: tests/test_rules.py)."""


# case: typed storage
import torch
x = torch.zeros(3)
n = x.storage().size()  # error: AL404
s = torch.FloatStorage(3)  # error: AL404
c = torch.cuda.HalfStorage  # error: AL404
t = torch.TypedStorage(4)  # error: AL404
from torch import DoubleStorage  # error: AL404


# case: storage method of other class
import numpy
class Bucket:
    def storage(self):
        return numpy.zeros(3)
b = Bucket()
b.storage()
