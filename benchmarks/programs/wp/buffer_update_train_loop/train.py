import torch.nn.functional as F


def train_epoch(model, optimizer, batches):
    model.train()
    total = 0.0
    for data, target in batches:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(data), target)
        model.update_stats()
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / len(batches)
