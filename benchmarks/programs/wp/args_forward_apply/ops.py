import torch


def gaussian_noise(images, std=0.1):
    images.add_(torch.randn_like(images) * std)
    return images


def identity(images):
    return images
