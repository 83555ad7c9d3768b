import torch


def gaussian_noise(images, std=0.1):
    return images + torch.randn_like(images) * std


def identity(images):
    return images
