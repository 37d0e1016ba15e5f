"""`minigrad.save` / `minigrad.load`: tensors, state dicts and nested containers in one `.npz` file.

The file is a NumPy `.npz` archive: one array per tensor (`t0`, `t1`, ...) and a JSON manifest
(`__minigrad__`) that describes the object around them (dicts, lists, tuples, numbers, strings,
which tensors are Parameters or require grad). Nothing is ever pickled, so loading a file
cannot run code; an object that cannot be described this way is refused when saving.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections import OrderedDict
from typing import Any

import numpy as np

from ._tensor import Tensor, make

FORMAT = "minigrad-save"
VERSION = 1
MANIFEST = "__minigrad__"


class _Writer:
    __slots__ = ("arrays", "ids")

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self.ids: dict[int, str] = {}

    def encode(self, obj: Any) -> dict:
        if isinstance(obj, Tensor):
            key = self.ids.get(id(obj))
            if key is None:
                key = self.ids[id(obj)] = f"t{len(self.arrays)}"
                self.arrays[key] = obj._data
            from .nn.parameter import Parameter

            return {"kind": "tensor", "key": key, "requires_grad": obj._requires_grad,
                    "parameter": isinstance(obj, Parameter)}
        if obj is None:
            return {"kind": "none"}
        if isinstance(obj, bool):
            return {"kind": "bool", "value": obj}
        if isinstance(obj, (int, np.integer)):
            return {"kind": "int", "value": int(obj)}
        if isinstance(obj, (float, np.floating)):
            return {"kind": "float", "value": float(obj)}
        if isinstance(obj, str):
            return {"kind": "str", "value": obj}
        if isinstance(obj, dict):
            return {"kind": "ordered_dict" if isinstance(obj, OrderedDict) else "dict",
                    "items": [[self.encode(k), self.encode(v)] for k, v in obj.items()]}
        if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
            return {"kind": type(obj).__name__ if type(obj) in (list, tuple) else "list",
                    "items": [self.encode(v) for v in obj]}
        what = f"{type(obj).__module__}.{type(obj).__qualname__}"
        raise TypeError(f"minigrad.save cannot store an object of type {what}: "
                        "it stores tensors, numbers, strings, None, and dicts/lists/tuples of them (it never pickles). "
                        "\nhint: save `model.state_dict()` rather than the model itself.")


def save(obj: Any, f, **kwargs) -> None:
    """Save a tensor, a state dict, or nested dicts/lists/tuples of tensors and numbers to `f` (a path or file)."""
    w = _Writer()
    manifest = {"format": FORMAT, "version": VERSION, "root": w.encode(obj)}
    arrays = dict(w.arrays)
    arrays[MANIFEST] = np.array(json.dumps(manifest))
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:  # np.savez would append ".npz" to a path without it
            np.savez(fh, **arrays)
    else:
        np.savez(f, **arrays)


def _bad(f, what: str) -> RuntimeError:
    name = f if isinstance(f, (str, os.PathLike)) else getattr(f, "name", "<file object>")
    return RuntimeError(f"minigrad.load: {name} is not a valid minigrad file: {what}")


class _Reader:
    __slots__ = ("archive", "cache", "f")

    def __init__(self, archive, f) -> None:
        self.archive = archive
        self.cache: dict[str, Tensor] = {}
        self.f = f

    def decode(self, node) -> Any:
        if not isinstance(node, dict) or "kind" not in node:
            raise _bad(self.f, f"the manifest has a malformed entry {node!r}")
        kind = node["kind"]
        if kind == "tensor":
            return self.tensor(node)
        if kind == "none":
            return None
        if kind in ("bool", "int", "float", "str"):
            return node["value"]
        if kind in ("dict", "ordered_dict"):
            items = [(self.decode(k), self.decode(v)) for k, v in node["items"]]
            return OrderedDict(items) if kind == "ordered_dict" else dict(items)
        if kind == "list":
            return [self.decode(v) for v in node["items"]]
        if kind == "tuple":
            return tuple(self.decode(v) for v in node["items"])
        raise _bad(self.f, f"unknown entry kind {kind!r} in the manifest")

    def tensor(self, node: dict) -> Tensor:
        key = node["key"]
        t = self.cache.get(key)
        if t is not None:
            return t
        try:
            arr = self.archive[key]
        except KeyError:
            raise _bad(self.f, f"the manifest refers to array {key!r}, which the archive does not contain") from None
        except ValueError as e:  # an object array would need pickle
            raise _bad(self.f, f"array {key!r} cannot be read without pickle ({e})") from None
        except (zipfile.BadZipFile, OSError, EOFError) as e:
            raise _bad(self.f, f"array {key!r} is damaged ({e})") from None
        if arr.dtype.kind not in "fiub":
            raise _bad(self.f, f"array {key!r} has dtype {arr.dtype}, which minigrad tensors cannot hold")
        if node.get("parameter"):
            from .nn.parameter import Parameter

            t = Parameter(make(arr), requires_grad=bool(node.get("requires_grad", True)))
        else:
            t = make(arr, None, bool(node.get("requires_grad", False)) and arr.dtype.kind == "f")
        self.cache[key] = t
        return t


def load(f, map_location=None, weights_only: bool | None = None, **kwargs) -> Any:
    """Load what `minigrad.save` stored. A damaged or foreign file (e.g. a torch.save file) is a RuntimeError."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:  # our own handle: closed even when NumPy fails half-way
            return _load(fh, f)
    return _load(f, f)


def _load(fh, f) -> Any:
    try:
        archive = np.load(fh, allow_pickle=False)
    except ValueError as e:
        raise _bad(f, f"it is not a NumPy .npz archive ({e})") from None
    except (zipfile.BadZipFile, OSError, EOFError) as e:
        raise _bad(f, f"the archive is damaged or truncated ({e})") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise _bad(f, "it holds a single NumPy array, not a minigrad archive (was it written by numpy.save?)")
    with archive:
        if MANIFEST not in archive.files:
            hint = " (it looks like a torch.save file: load it with torch and convert via .numpy())" if any(
                n.endswith("data.pkl") for n in archive.files) else ""
            raise _bad(f, f"the archive has no '{MANIFEST}' manifest{hint}")
        try:
            manifest = json.loads(str(archive[MANIFEST]))
        except (ValueError, zipfile.BadZipFile, OSError, EOFError) as e:
            raise _bad(f, f"its manifest cannot be read ({e})") from None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise _bad(f, "the manifest does not describe a minigrad file")
        if manifest.get("version") != VERSION:
            raise _bad(f, f"format version {manifest.get('version')!r} is not supported (this minigrad reads "
                          f"version {VERSION})")
        try:
            return _Reader(archive, f).decode(manifest.get("root"))
        except (KeyError, TypeError) as e:
            raise _bad(f, f"the manifest is malformed ({type(e).__name__}: {e})") from None

