# source: https://github.com/haofanwang/Score-CAM/issues/28 (denormalising an image that requires grad channel by channel; iterating a tensor is unbind)
# expect: AL106 at line 10
# torch: raises RuntimeError "returns multiple views"
import torch


def denormalize(image, means, stds):
    out = image.clone()
    for channel, mean, std in zip(out, means, stds):
        channel.mul_(std).add_(mean)
    return out


torch.manual_seed(0)
saliency_input = torch.rand(3, 8, 8, requires_grad=True)
shown = denormalize(saliency_input, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
