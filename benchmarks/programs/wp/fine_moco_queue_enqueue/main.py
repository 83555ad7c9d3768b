# source: https://github.com/facebookresearch/moco/blob/7397dfe146c7ca6bbb58e9c382498069178ba764/moco/builder.py @ 7397dfe146c7ca6bbb58e9c382498069178ba764
# expect: none
# torch: ok
import torch
import torch.nn.functional as F

from builder import MoCo


def train_step(model, optimizer, im_q, im_k):
    logits, labels = model(im_q, im_k)
    loss = F.cross_entropy(logits, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


def main():
    torch.manual_seed(0)
    model = MoCo(dim=4, queue_size=8)
    optimizer = torch.optim.SGD(model.encoder_q.parameters(), lr=0.03)
    x = torch.randn(4, 6)
    train_step(model, optimizer, x + 0.1 * torch.randn_like(x), x)


if __name__ == "__main__":
    main()
