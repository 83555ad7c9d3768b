from .blocks import AttentionPool
from .ops import sharpen

__all__ = ["AttentionPool", "sharpen"]
