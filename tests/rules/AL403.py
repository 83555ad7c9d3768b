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
