class ProbabilityFloorMixin:
    """Keeps predicted probabilities away from zero so the log stays finite."""

    floor = 1e-4

    def apply_floor(self, probs):
        probs.clamp_(min=self.floor)
        return probs / probs.sum(dim=-1, keepdim=True)
