from torch import nn


class BasicBlock(nn.Module):
    def __init__(self, c_in, c_out, stride):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 3, stride=stride, padding=1, bias=False)
        self.norm = nn.BatchNorm2d(c_out)

    def forward(self, x):
        return self.norm(self.conv(x))


def make_stage(c_in, c_out, num_blocks, first_stride=2):
    """Each block is preceded by its activation, so a stage starts with a ReLU."""
    blocks = []
    for i in range(num_blocks):
        blocks.append(nn.ReLU(inplace=True))
        blocks.append(BasicBlock(c_in if i == 0 else c_out, c_out, first_stride if i == 0 else 1))
    return nn.Sequential(*blocks)
