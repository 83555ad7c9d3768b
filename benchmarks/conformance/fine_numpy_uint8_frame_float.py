# source: pytorch/pytorch test/test_numpy_interop.py (from_numpy shares memory, but a dtype conversion of the tensor copies): a uint8 frame from an image loader scaled with .float().div_()
# expect: none
# torch: ok
import numpy as np
import torch


def load_frame(h, w):
    frame = np.zeros((h, w, 3), dtype=np.uint8)
    frame[:, :, 0] = 255
    return frame


frame = load_frame(4, 5)
pixels = torch.from_numpy(frame).float().div_(255)
chw = pixels.permute(2, 0, 1)
if frame[0, 0, 0] != 255 or chw[0].max().item() != 1.0:
    raise SystemExit(1)
