def cls_token(tokens):
    """The class token of a (batch, tokens, dim) sequence, as a view."""
    return tokens[:, 0]


def patch_tokens(tokens):
    return tokens[:, 1:]
