"""`minigrad.optim`: optimizers that update parameters in place from their `.grad`, as torch.optim."""

from . import lr_scheduler
from .adagrad import Adadelta, Adagrad
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["SGD", "Adadelta", "Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "lr_scheduler"]


from .._missing import missing_name  # noqa: E402

__getattr__ = missing_name(__name__, "torch.optim")
