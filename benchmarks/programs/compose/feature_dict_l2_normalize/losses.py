import torch


def l2_normalize(feats, eps=1e-6):
    for name, v in feats.items():
        v.div_(v.norm(dim=1, keepdim=True) + eps)
    return feats


def info_nce(a, b, temperature=0.1):
    logits = a @ b.t() / temperature
    return torch.nn.functional.cross_entropy(logits, torch.arange(a.size(0)))
