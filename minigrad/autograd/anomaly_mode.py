"""Anomaly detection: name the node whose backward produced NaN, with its forward traceback.

As in PyTorch, every node made in anomaly mode keeps where it was made in `node.metadata["traceback_"]`
(the lines of `traceback.format_stack()`, ending at the user's call), and a node made while backward ran
a node (under `create_graph=True`) keeps that node in `node.metadata["parent_"]`: public names through
which viz shows the code behind each node and the graph of the backward pass, for PyTorch graphs too.
"""

from __future__ import annotations

import os
import traceback
import warnings

import numpy as np

from .._stacklevel import user_stacklevel

ENABLED = [False, True]  # [detect anomalies, check for NaN]
RUNNING: list = [None]  # the node backward last ran in anomaly mode: the parent of the nodes made now

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_PYTHON_LEVEL = (os.path.join(_PACKAGE, "nn") + os.sep, os.path.join(_PACKAGE, "optim") + os.sep)


def is_anomaly_enabled() -> bool:
    return ENABLED[0]


def is_anomaly_check_nan_enabled() -> bool:
    return ENABLED[1]


class detect_anomaly:
    """Context manager: while active, nodes remember their forward traceback and NaN is an error."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only "
                      "be enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self) -> None:
        self.prev = list(ENABLED)
        ENABLED[0], ENABLED[1] = True, self.check_nan

    def __exit__(self, *exc) -> None:
        ENABLED[:] = self.prev


class set_detect_anomaly:
    """`set_detect_anomaly(True)` switches at once; also usable as a context manager."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = list(ENABLED)
        ENABLED[0], ENABLED[1] = bool(mode), check_nan

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        ENABLED[:] = self.prev


def remember_forward(node) -> None:
    """Called when a node is made in anomaly mode: keep where the forward op was called (and, during
    backward, the node whose formula made it)."""
    metadata = node.metadata
    metadata["traceback_"] = _user_stack()
    if RUNNING[0] is not None:
        metadata["parent_"] = RUNNING[0]


def _user_stack() -> list:
    """`traceback.format_stack()` without minigrad's own innermost frames: PyTorch's ops run in C++, so its
    tracebacks end at the Python line that called the op (modules' Python code, as torch.nn's, stays)."""
    frames = traceback.extract_stack()
    while frames and _is_internal(frames[-1].filename):
        frames.pop()
    return traceback.format_list(frames)


def _is_internal(filename: str) -> bool:
    path = os.path.abspath(filename)
    return path.startswith(_PACKAGE) and not path.startswith(_PYTHON_LEVEL)


def run_checked(node, buf: list, create_graph: bool) -> list:
    """`node._apply`, and in anomaly mode: the forward traceback when it fails, and an error on NaN."""
    if not ENABLED[0]:
        return node._apply(buf, create_graph)
    RUNNING[0] = node  # until the next node runs: gradients it hands on are summed in its name, as in PyTorch
    try:
        outs = node._apply(buf, create_graph)
    except Exception:
        _warn_forward(node)
        raise
    if ENABLED[1]:
        for i, g in enumerate(outs):
            if g is None:
                continue
            arr = getattr(g, "_data", g)
            if np.isnan(np.asarray(arr)).any():
                _warn_forward(node)
                raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
    return outs


def _warn_forward(node) -> None:
    tb = "".join((node._metadata or {}).get("traceback_", ()))
    if tb:
        warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n{tb}",
                      UserWarning, stacklevel=_engine_stacklevel())


def _engine_stacklevel() -> int:
    return user_stacklevel() - 1  # counted from _warn_forward, one frame below this one
