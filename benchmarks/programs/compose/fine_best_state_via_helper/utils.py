from torch import nn


def unwrap_model(model):
    return model.module if hasattr(model, "module") else model


def get_state_dict(model):
    return unwrap_model(model).state_dict()


def evaluate(model, x, y):
    model.eval()
    loss = nn.functional.mse_loss(model(x), y).item()
    model.train()
    return loss
