"""`minigrad.optim`: optimizers that update parameters in place from their `.grad`, as torch.optim."""

from .adam import Adam, AdamW
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["SGD", "Adam", "AdamW", "Optimizer"]


def __getattr__(name: str):
    """A PyTorch name this module lacks: say that minigrad does not implement it."""
    if name.startswith("_"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    raise AttributeError(
        f"minigrad does not implement torch.optim.{name}. minigrad covers PyTorch's autograd API for teaching; "
        "see 'Differences from PyTorch' in the README for what is left out.")
