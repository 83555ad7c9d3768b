"""AL403 data-ptr-sharing-check: its positive and negative cases (format: tests/test_rules.py)."""


# case: data ptr
import torch
base = torch.arange(10)
window = base.narrow(0, 2, 4)
assert window.data_ptr() != base.data_ptr()  # error: AL403


# case: recommended forms
import torch
a = torch.zeros(3)
b = a[1:]
print(a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr())
s = torch.UntypedStorage(8)


# case: operands proven to start their storage
# runs: ok
import torch
x = torch.randn(3, 3)
flat = x.reshape(-1)
assert flat.data_ptr() == x.data_ptr()
assert x[0].data_ptr() == x.t().data_ptr()


# case: a view that starts further into the storage
# runs: raises AssertionError
import torch
x = torch.randn(3, 3)
tail = torch.narrow(x, 0, 1, 2)
assert tail.data_ptr() == x.data_ptr()  # error: AL403
