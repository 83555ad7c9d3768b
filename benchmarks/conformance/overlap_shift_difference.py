# source: pytorch/pytorch test/test_binary_ufuncs.py TestBinaryUfuncs.test_binary_op_mem_overlap (input and output partially overlap)
# expect: AL203 at line 8
# torch: raises RuntimeError "some elements of the input tensor and the written-to tensor refer to a single memory location"
import torch

prices = torch.tensor([3.0, 4.0, 6.0, 5.0, 8.0])
# First differences in place, to save an allocation.
prices[1:] -= prices[:-1]
