# source: https://github.com/nkolot/GraphCMR/issues/7 (img_orig is stored after normalize_img changed img in place)
# expect: AL208 at line 9
# torch: wrong "the kept original image is the normalised one"
import torch


def normalize_img(img, mean, std):
    for c in range(img.shape[0]):
        img[c].sub_(mean[c]).div_(std[c])
    return img


torch.manual_seed(0)
img = torch.rand(3, 4, 4)
item = {"img": normalize_img(img, [0.5, 0.5, 0.5], [0.25, 0.25, 0.25])}
item["img_orig"] = img
if item["img_orig"].min().item() < 0.0:
    raise SystemExit(1)
