"""`minigrad.autograd`: backward, grad, custom Functions, the legacy Variable, and checks."""

from __future__ import annotations

from . import _functions, anomaly_mode, engine, functional, grad_mode, graph
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .gradients import backward, grad
from .variable import Variable

__all__ = ["Variable", "Function", "FunctionCtx", "once_differentiable", "backward", "grad", "no_grad",
           "enable_grad", "set_grad_enabled", "inference_mode", "detect_anomaly", "set_detect_anomaly",
           "graph", "grad_mode", "anomaly_mode", "functional", "gradcheck", "gradgradcheck", "GradcheckError"]

from .._missing import missing_name  # noqa: E402

__getattr__ = missing_name(__name__, "torch.autograd")
