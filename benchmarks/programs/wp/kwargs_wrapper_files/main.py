# source: https://github.com/facebookresearch/detectron2/blob/3d3e66416b40da3048814c0654c98f499a3e1944/detectron2/layers/wrappers.py @ 3d3e66416b40da3048814c0654c98f499a3e1944
# expect: AL208 at models.py:8
# torch: wrong "the denoising target was corrupted along with the input"
import torch

from models import Denoiser, MaskedCorruption
from wrappers import Profiled


def denoising_loss(corrupt, model, clean):
    noisy = corrupt(clean, fraction=0.5)
    return (model(noisy) - clean).pow(2).mean(), clean


def main():
    torch.manual_seed(0)
    clean = torch.rand(8, 6) + 1.0
    corrupt = Profiled(MaskedCorruption())
    loss, target = denoising_loss(corrupt, Denoiser(6), clean)
    loss.backward()
    if (target == 0).any():
        raise SystemExit(1)


if __name__ == "__main__":
    main()
