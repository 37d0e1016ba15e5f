"""`minigrad.utils`: data loading helpers (`minigrad.utils.data`), as `torch.utils`."""

from . import data

__all__ = ["data"]
