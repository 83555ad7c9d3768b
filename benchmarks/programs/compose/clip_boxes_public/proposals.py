import torch

from boxes import box_area, clip_boxes


def filter_proposals(proposals, height, width, min_visible=0.5):
    """Keep the proposals with at least min_visible of their area inside the image."""
    clipped = clip_boxes(proposals, height, width)
    visible = box_area(clipped) / box_area(proposals).clamp(min=1e-6)
    keep = visible >= min_visible
    return clipped[keep], keep
