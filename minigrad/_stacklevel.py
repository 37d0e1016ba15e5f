"""Where a warning points: at the learner's line, the first frame outside minigrad."""

from __future__ import annotations

import os
import sys


def user_stacklevel() -> int:
    """The `stacklevel` that points a warning at the first frame outside minigrad (the learner's line)."""
    package = os.path.dirname(os.path.abspath(__file__))  # the minigrad folder
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package + os.sep):
        frame, level = frame.f_back, level + 1
    return level
