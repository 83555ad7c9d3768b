def binarize(masks, threshold=0.5):
    """Hard masks for logging; the soft ones go to the loss."""
    hard = list(masks)
    for m in hard:
        m[m < threshold] = 0.0
        m[m >= threshold] = 1.0
    return hard


def soft_dice(prob, target, eps=1.0):
    inter = (prob * target).sum()
    return 1 - (2 * inter + eps) / (prob.sum() + target.sum() + eps)
