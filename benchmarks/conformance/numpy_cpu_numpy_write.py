# source: https://github.com/pytorch/tutorials/pull/485 (a tensor and its .numpy() array share memory when the tensor is on the CPU; .cpu() of a CPU tensor is that tensor)
# expect: AL301 at line 10
# torch: wrong "the embeddings were normalised through the exported array"
import numpy as np
import torch

torch.manual_seed(0)
emb = torch.randn(5, 3)
arr = emb.cpu().numpy()
arr /= np.linalg.norm(arr, axis=1, keepdims=True)
if torch.allclose(emb.norm(dim=1), torch.ones(5)):
    raise SystemExit(1)
