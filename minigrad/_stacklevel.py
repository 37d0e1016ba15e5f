"""Where a warning points: at the learner's line, the first frame outside minigrad; and PyTorch's
warnings given once per process (TORCH_WARN_ONCE) unless `set_warn_always(True)`."""

from __future__ import annotations

import os
import sys
import warnings

WARN_ALWAYS = [False]  # minigrad.set_warn_always(True): the once-per-process warnings every time
_GIVEN: set = set()  # the once-per-process warnings given so far


def set_warn_always(b: bool) -> None:
    """As `torch.set_warn_always`: give the warnings PyTorch gives once per process every time."""
    WARN_ALWAYS[0] = bool(b)


def is_warn_always_enabled() -> bool:
    return WARN_ALWAYS[0]


def warn_once(message: str, category: type = UserWarning) -> None:
    """A UserWarning at the learner's line, the first time only (every time under `set_warn_always(True)`)."""
    if message in _GIVEN and not WARN_ALWAYS[0]:
        return
    _GIVEN.add(message)
    warnings.warn(message, category, stacklevel=user_stacklevel())


def user_stacklevel() -> int:
    """The `stacklevel` that points a warning at the first frame outside minigrad (the learner's line)."""
    package = os.path.dirname(os.path.abspath(__file__))  # the minigrad folder
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package + os.sep):
        frame, level = frame.f_back, level + 1
    return level
