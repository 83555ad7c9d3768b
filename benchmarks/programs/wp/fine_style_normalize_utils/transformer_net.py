from torch import nn


class ConvLayer(nn.Module):
    def __init__(self, cin, cout, kernel):
        super().__init__()
        self.pad = nn.ReflectionPad2d(kernel // 2)
        self.conv = nn.Conv2d(cin, cout, kernel)

    def forward(self, x):
        return self.conv(self.pad(x))


class TransformerNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = ConvLayer(3, 8, 3)
        self.relu = nn.ReLU()
        self.conv2 = ConvLayer(8, 3, 3)

    def forward(self, x):
        return self.conv2(self.relu(self.conv1(x / 255.0))) * 255.0
