from torch import nn


def build_head(task, dim, num_classes=5):
    """One head per task; the depth head rectifies the shared features before regressing."""
    if task == "cls":
        return nn.Linear(dim, num_classes)
    if task == "depth":
        return nn.Sequential(nn.ReLU(inplace=True), nn.Linear(dim, 1))
    if task == "normal":
        return nn.Sequential(nn.Linear(dim, 3), nn.Tanh())
    raise KeyError(task)
