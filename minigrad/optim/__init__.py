"""`minigrad.optim`: optimizers that update parameters in place from their `.grad`, as torch.optim."""

from .adam import Adam, AdamW
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["SGD", "Adam", "AdamW", "Optimizer"]


from .._missing import missing_name  # noqa: E402

__getattr__ = missing_name(__name__, "torch.optim")
