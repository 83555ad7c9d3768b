from torch import nn

from stages import make_stage


class ResNetLite(nn.Module):
    def __init__(self, out_features=("res2", "res3")):
        super().__init__()
        self.add_module("stem", nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8)))
        self.add_module("res2", make_stage(8, 16, 2))
        self.add_module("res3", make_stage(16, 32, 2))
        self.stage_names = ["res2", "res3"]
        self._out_features = out_features

    def forward(self, x):
        outputs = {}
        x = self.stem(x)
        for name in self.stage_names:
            x = getattr(self, name)(x)
            if name in self._out_features:
                outputs[name] = x
        return outputs
