from base import MultiLabelHead


class SmoothedHead(MultiLabelHead):
    def __init__(self, dim, labels, smoothing=0.1):
        super().__init__(dim, labels)
        self.smoothing = smoothing

    def post(self, probs):
        probs.mul_(1.0 - self.smoothing).add_(self.smoothing / 2)
        return probs
