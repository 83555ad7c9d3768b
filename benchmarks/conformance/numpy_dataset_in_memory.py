# source: https://github.com/pytorch/vision/issues/680 (the tensor aliases the in-memory array and an in-place normalisation drifts the dataset)
# expect: AL301 at line 17
# torch: wrong "the second read of a sample was normalised twice"
import numpy as np
import torch


class InMemoryDataset(torch.utils.data.Dataset):
    def __init__(self, array):
        self.array = array

    def __len__(self):
        return len(self.array)

    def __getitem__(self, i):
        sample = torch.from_numpy(self.array[i])
        sample.sub_(0.5).div_(0.5)
        return sample


ds = InMemoryDataset(np.full((4, 3), 0.75, dtype=np.float32))
first_epoch = ds[0].clone()
second_epoch = ds[0]
if not torch.equal(first_epoch, second_epoch):
    raise SystemExit(1)
