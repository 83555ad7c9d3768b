import math

import torch


class BoxCoder:
    def __init__(self, max_size, scale_clamp=math.log(1000.0 / 16)):
        self.max_size = max_size
        self.scale_clamp = scale_clamp

    @staticmethod
    def clip_sizes(sizes, limit):
        return sizes.clamp(max=limit)

    def decode_sizes(self, deltas, anchors):
        # deltas are log-scale factors of the anchor sizes
        deltas = deltas.clamp(max=self.scale_clamp)
        scale = torch.exp(deltas)
        return self.clip_sizes(scale, self.max_size) * anchors
