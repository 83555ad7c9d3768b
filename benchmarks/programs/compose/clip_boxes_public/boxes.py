import torch


def clip_boxes(boxes, height, width):
    """Clip (x0, y0, x1, y1) boxes to an image of the given size and return them."""
    boxes[:, 0].clamp_(min=0, max=width)
    boxes[:, 1].clamp_(min=0, max=height)
    boxes[:, 2].clamp_(min=0, max=width)
    boxes[:, 3].clamp_(min=0, max=height)
    return boxes


def box_area(boxes):
    return (boxes[:, 2] - boxes[:, 0]).clamp(min=0) * (boxes[:, 3] - boxes[:, 1]).clamp(min=0)
