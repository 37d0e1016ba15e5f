"""Anomaly detection: name the node whose backward produced NaN, with its forward traceback."""

from __future__ import annotations

import traceback
import warnings

import numpy as np

from .._stacklevel import user_stacklevel

ENABLED = [False, True]  # [detect anomalies, check for NaN]


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
    """Called when a node is recorded in anomaly mode: keep where the forward op was called."""
    node._extra("traceback", lambda: "".join(traceback.format_stack()[:-4]))


def run_checked(node, buf: list, create_graph: bool) -> list:
    """`node._apply`, and in anomaly mode: the forward traceback when it fails, and an error on NaN."""
    if not ENABLED[0]:
        return node._apply(buf, create_graph)
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
    tb = (node._extras or {}).get("traceback")
    if tb:
        warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n{tb}",
                      UserWarning, stacklevel=_engine_stacklevel())


def _engine_stacklevel() -> int:
    return user_stacklevel() - 1  # counted from _warn_forward, one frame below this one
