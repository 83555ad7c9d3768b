def sharpen(weights, temperature=0.5):
    """Raise attention weights to 1/temperature and renormalise them."""
    weights = weights.pow(1.0 / temperature)
    return weights / weights.sum(dim=-1, keepdim=True)
