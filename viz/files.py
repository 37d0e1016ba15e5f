"""Writing exports: all or nothing.

Every file viz writes (pictures, pages, filmstrips, DOT text) is first written in full to a
temporary file in the target's folder and then renamed over the target with
``os.replace``, which is atomic on one file system. An export that fails — a bad character,
a full disk, an interrupt — leaves the old file as it was (or no file), never a partial one.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: str | os.PathLike, data: bytes | str) -> Path:
    """Write ``data`` (text is encoded as UTF-8 first) to ``path`` atomically."""
    target = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)  # fails before any file exists
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(payload)
        os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return target


def _read_umask() -> int:
    """The process umask, read once at import (mkstemp makes files 0600; an export should
    get the mode any other new file gets)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _read_umask()
