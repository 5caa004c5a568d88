from comparisons.models.published import Correction, PublishedFigure

__all__ = ["Correction", "PublishedFigure"]
