# source: https://github.com/huggingface/pytorch-image-models/blob/bd5f9a341f605d51608db048106ce51b088a8c68/timm/layers/classifier.py @ bd5f9a341f605d51608db048106ce51b088a8c68
# expect: AL101 at mixins.py:7
# torch: raises RuntimeError "modified by an inplace operation"
import torch

from models import Classifier


def distill_step(student, teacher_probs, x):
    probs = student(x)
    loss = -(teacher_probs * probs.log()).sum(dim=-1).mean()
    loss.backward()
    return loss.item()


def main():
    torch.manual_seed(0)
    student = Classifier(6, 4)
    teacher = torch.softmax(torch.randn(3, 4), dim=-1)
    distill_step(student, teacher, torch.randn(3, 6))


if __name__ == "__main__":
    main()
