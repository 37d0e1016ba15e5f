"""The code behind each node: which line of the learner's code made it.

PyTorch (and minigrad, which mirrors it) keeps where each node was made when anomaly mode is on:
``node.metadata["traceback_"]``, the lines of ``traceback.format_stack()``. ``source_lines()``
switches that mode on (without its NaN checks, and without its warning) for the block, in each
of the two libraries that is already imported; ``line_of(node)`` reads the learner's line back:
the innermost frame that is not library code (torch, minigrad, viz, the standard library,
site-packages), so a node made inside ``nn.Linear`` points at ``model(x)``. Notebook cells
(``/tmp/ipykernel_<pid>/<hash>.py``) are named as IPython names them: "cell [5], line 2".

Nothing here imports torch or minigrad, and nothing runs unless asked: without ``source=True``
no node keeps a traceback and the graph is built as fast as before.
"""

from __future__ import annotations

import contextlib
import linecache
import os
import re
import sys
import sysconfig
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from . import probe

__all__ = ["SourceLine", "source_lines", "line_of", "cell_name"]

_FRAME = re.compile(r'^\s*File "(?P<file>.*)", line (?P<line>\d+), in (?P<func>.*)$')
_KERNEL_FILE = re.compile(r"[/\\]ipykernel_\d+[/\\]\d+\.py$")
_IPYTHON_INPUT = re.compile(r"^<ipython-input-(?P<count>\d+)-[0-9a-f]+>$")
_LIBRARIES = ("torch", "minigrad", "viz")
_ANOMALY_WARNING = "Anomaly Detection has been enabled"


@dataclass(frozen=True)
class SourceLine:
    """Where a node was made: ``where`` is what a learner reads ("cell [5], line 2", "train.py, line 12")."""

    filename: str
    lineno: int
    code: str
    where: str

    def __str__(self) -> str:
        return f"{self.where}: {self.code}" if self.code else self.where


# -- recording -------------------------------------------------------------------------------------------------


def _autograd_modules() -> list[Any]:
    """The autograd packages of minigrad and torch, for those already imported (viz imports neither)."""
    out = []
    for name in ("minigrad", "torch"):
        module = sys.modules.get(name)
        autograd = getattr(module, "autograd", None) if module is not None else None
        if autograd is not None and hasattr(autograd, "set_detect_anomaly"):
            out.append(autograd)
    return out


def _anomaly_state(autograd: Any) -> tuple[bool, bool]:
    """(enabled, check_nan) of one library, through its public functions."""
    root = sys.modules.get(autograd.__name__.split(".")[0])
    for owner in (autograd, root, getattr(autograd, "anomaly_mode", None)):
        enabled = getattr(owner, "is_anomaly_enabled", None)
        check = getattr(owner, "is_anomaly_check_nan_enabled", None)
        if callable(enabled) and callable(check):
            return bool(enabled()), bool(check())
    return False, True


@contextlib.contextmanager
def source_lines() -> Iterator[None]:
    """While active, every node made remembers the line that made it (anomaly mode with
    ``check_nan=False``: NaNs are not errors, no warning is printed); the previous mode comes back after."""
    switched = []
    try:
        for autograd in _autograd_modules():
            previous = _anomaly_state(autograd)
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=_ANOMALY_WARNING)
                autograd.set_detect_anomaly(True, check_nan=False)
            switched.append((autograd, previous))
        yield
    finally:
        for autograd, (enabled, check_nan) in reversed(switched):
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=_ANOMALY_WARNING)
                autograd.set_detect_anomaly(enabled, check_nan=check_nan)


# -- reading -----------------------------------------------------------------------------------------------------


def _library_dirs() -> tuple[str, ...]:
    dirs = []
    for name in _LIBRARIES:
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None) if module is not None else None
        if path:
            dirs.append(os.path.dirname(os.path.abspath(path)) + os.sep)
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        with contextlib.suppress(Exception):
            dirs.append(os.path.abspath(sysconfig.get_paths()[key]) + os.sep)
    return tuple(dict.fromkeys(dirs))


def _is_library(filename: str, dirs: tuple[str, ...]) -> bool:
    if filename.startswith("<") and not _IPYTHON_INPUT.match(filename):
        return filename.startswith("<frozen")
    path = os.path.abspath(filename)
    return path.startswith(dirs) or f"{os.sep}site-packages{os.sep}" in path


def _frames(stack: Any) -> list[tuple[str, int, str]]:
    """(filename, line, code) of each entry of a ``format_stack()`` list, outermost first."""
    out = []
    for entry in stack:
        lines = str(entry).splitlines()
        match = _FRAME.match(lines[0]) if lines else None
        if match is None:
            continue
        code = lines[1].strip() if len(lines) > 1 and set(lines[1].strip()) - set("^~ ") else ""
        out.append((match["file"], int(match["line"]), code))
    return out


def line_of(fn: Any, dirs: tuple[str, ...] | None = None) -> SourceLine | None:
    """The learner's line that made node ``fn`` (from its ``metadata["traceback_"]``), or None when the node
    was made outside ``source_lines()``."""
    stack = probe.metadata(fn).get("traceback_")
    if not stack:
        return None
    dirs = _library_dirs() if dirs is None else dirs
    frames = _frames(stack)
    chosen = next((f for f in reversed(frames) if not _is_library(f[0], dirs)), None)
    if chosen is None:
        return None
    filename, lineno, code = chosen
    if not code:
        code = linecache.getline(filename, lineno).strip()
    return SourceLine(filename, lineno, code, f"{cell_name(filename) or os.path.basename(filename)}, line {lineno}")


def cell_name(filename: str) -> str | None:
    """'cell [5]' for code a notebook cell ran (IPython's execution count), 'cell' when the count is unknown;
    None for a file."""
    match = _IPYTHON_INPUT.match(filename)
    if match:
        return f"cell [{match['count']}]"
    if not _KERNEL_FILE.search(filename):
        return None
    count = _execution_count(filename)
    return f"cell [{count}]" if count is not None else "cell"


def _execution_count(filename: str) -> int | None:
    """IPython's own number for the cell: its compiler's public ``format_code_name`` (what its tracebacks
    print as "Cell In[5]"; also set for cells run without history, as nbval runs them), else the input
    history entry whose text is the file's."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    if shell is None:
        return None
    name = getattr(getattr(shell, "compile", None), "format_code_name", None)
    if callable(name):
        with contextlib.suppress(Exception):
            label = name(filename)
            match = re.search(r"\[(\d+)\]", str(label[1])) if label else None
            if match:
                return int(match.group(1))
    history = getattr(getattr(shell, "history_manager", None), "input_hist_parsed", None)
    text = "".join(linecache.getlines(filename))
    if not history or not text:
        return None
    wanted = text.rstrip("\n")
    for count in range(len(history) - 1, 0, -1):
        if str(history[count]).rstrip("\n") == wanted:
            return count
    return None


def lines_by_node(walk: Any) -> list[SourceLine | None]:
    """The source line of each walked node (None for AccumulateGrad nodes: a leaf is made, not computed)."""
    dirs = _library_dirs()
    return [None if raw.is_accumulate else line_of(raw.fn, dirs) for raw in walk.nodes]
