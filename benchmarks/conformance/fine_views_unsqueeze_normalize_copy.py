# source: pytorch/pytorch test/test_view_ops.py TestViewOps.test_unsqueeze_view; https://github.com/nkolot/GraphCMR/issues/7 (the fix: normalise out of place, so the image kept for display stays as it was)
# expect: none
# torch: ok
import torch
from torch import nn

MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)

torch.manual_seed(0)
model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 5))
model.eval()
gallery = [torch.rand(3, 8, 8) for _ in range(3)]
shown = []
for image in gallery:
    # A batch of one for the model; `image` itself is what the report shows.
    batch = (image.unsqueeze(0) - MEAN) / STD
    with torch.no_grad():
        label = model(batch).argmax(dim=1).item()
    shown.append((label, image))
if any(picture.min() < 0.0 for _, picture in shown):
    raise SystemExit(1)
