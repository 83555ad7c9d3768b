# source: https://github.com/huggingface/pytorch-image-models/blob/a10ed118c94d767ca9c2e1eaaa177fe993c1216d/timm/layers/patch_embed.py @ a10ed118c94d767ca9c2e1eaaa177fe993c1216d
# expect: AL101 at models.py:21
# torch: raises RuntimeError "modified by an inplace operation"
import torch
import torch.nn.functional as F

from models import TinyViT


def train_step(model, images, labels):
    logits = model(images)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    return loss.item()


def main():
    torch.manual_seed(0)
    model = TinyViT(patch=4, dim=8, classes=3)
    train_step(model, torch.randn(2, 3, 8, 8), torch.tensor([0, 2]))


if __name__ == "__main__":
    main()
