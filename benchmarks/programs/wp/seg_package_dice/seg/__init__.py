from .head import SegHead
from .losses import dice_loss

__all__ = ["SegHead", "dice_loss"]
