class FeatureBank:
    """The most recent feature batches, oldest first."""

    def __init__(self, size):
        self.size = size
        self.items = []

    def push(self, feats):
        self.items.append(feats)
        del self.items[:-self.size]
        return self.items

    def decay(self, window, rate=0.9):
        for old in window[:-1]:
            old.mul_(rate)
