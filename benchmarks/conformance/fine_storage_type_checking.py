# source: https://github.com/pytorch/pytorch/issues/89224 (the TypedStorage deprecation), here TypedStorage named only for the type checker while the code uses untyped_storage()
# expect: none
# torch: ok
from typing import TYPE_CHECKING, Union

import torch

if TYPE_CHECKING:
    from torch.storage import TypedStorage


def storage_nbytes(s: Union["TypedStorage", torch.UntypedStorage]) -> int:
    return s.nbytes()


weights = torch.zeros(16, 8)
if storage_nbytes(weights[:2].untyped_storage()) != 16 * 8 * 4:
    raise SystemExit(1)
