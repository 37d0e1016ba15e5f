"""`minigrad.save` / `minigrad.load`: tensors, state dicts and nested containers in one `.npz` file.

The file is a NumPy `.npz` archive: one flat array per storage (`s0`, `s1`, ...: the memory that one
or several tensors view) and a JSON manifest (`__minigrad__`) that describes the object around them
(dicts, lists, tuples, numbers, strings; for each tensor its storage, offset, shape and strides, and
whether it is a Parameter or requires grad). Nothing is ever pickled, so loading a file cannot run
code; an object that cannot be described this way is refused when saving.

As with `torch.save`, views of one tensor are saved as views of one storage and share memory again
after loading, an object saved twice loads as one object, and containers may contain themselves.
Loading checks everything a file says before using it (types of manifest values, dtypes, sizes,
offsets), so a damaged or hostile file gives one `RuntimeError` naming the file instead of a NumPy
exception, a huge allocation or a wrong value.
"""

from __future__ import annotations

import json
import math
import os
import sys
import warnings
import zipfile
from collections import OrderedDict
from typing import Any

import numpy as np

from ._device import device
from ._hint import hint
from ._tensor import Tensor, make
from .nn.parameter import Parameter

FORMAT = "minigrad-save"
VERSION = 2  # 1: one array per tensor (still read); 2: storages, views, references
MANIFEST = "__minigrad__"

# The dtypes minigrad tensors hold (README, "Dtypes"), in native byte order.
SUPPORTED_DTYPES = frozenset(np.dtype(n) for n in (
    "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"))
_DEFLATE_MAX_RATIO = 1032  # deflate cannot expand data more than this


# --------------------------------------------------------------------------------------------------
# Saving


class _Writer:
    """Encodes an object as JSON; tensors become views of storages, repeated objects references."""

    __slots__ = ("arrays", "ids", "storages", "alive")

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self.ids: dict[int, int] = {}  # id(object) -> reference number
        self.storages: dict[int, str] = {}  # id(root array) -> storage key
        self.alive: list = []  # keeps every encoded object alive, so ids stay unique while encoding

    def encode(self, obj: Any) -> dict:
        if isinstance(obj, (Tensor, dict, list, tuple)) and id(obj) in self.ids:
            return {"kind": "ref", "id": self.ids[id(obj)]}
        if isinstance(obj, Tensor):
            return self.tensor(obj)
        if obj is None:
            return {"kind": "none"}
        if isinstance(obj, (bool, np.bool_)):
            return {"kind": "bool", "value": bool(obj)}
        if isinstance(obj, (int, np.integer)):
            return {"kind": "int", "value": int(obj)}
        if isinstance(obj, (float, np.floating)):
            return {"kind": "float", "value": float(obj)}
        if isinstance(obj, str):
            return {"kind": "str", "value": obj}
        if isinstance(obj, dict):
            node = {"kind": "ordered_dict" if isinstance(obj, OrderedDict) else "dict", "id": self.remember(obj)}
            node["items"] = [[self.encode(k), self.encode(v)] for k, v in obj.items()]
            return node
        if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
            node = {"kind": "tuple" if isinstance(obj, tuple) else "list", "id": self.remember(obj)}
            node["items"] = [self.encode(v) for v in obj]
            return node
        what = f"{type(obj).__module__}.{type(obj).__qualname__}"
        raise TypeError(f"minigrad.save cannot store an object of type {what}: "
                        "it stores tensors, numbers, strings, None, and dicts/lists/tuples of them (it never pickles). "
                        "\n" + hint("save `model.state_dict()` rather than the model itself."))

    def remember(self, obj: Any) -> int:
        self.ids[id(obj)] = len(self.ids)
        self.alive.append(obj)
        return self.ids[id(obj)]

    def tensor(self, t: Tensor) -> dict:

        key, offset, strides = self.storage(t._data)
        return {"kind": "tensor", "id": self.remember(t), "storage": key, "offset": offset,
                "shape": list(t._data.shape), "strides": strides, "dtype": t._data.dtype.name,
                "requires_grad": bool(t._requires_grad), "parameter": isinstance(t, Parameter)}

    def storage(self, arr: np.ndarray) -> tuple[str, int, list[int]]:
        """(storage key, offset, strides in elements) of ``arr``: the memory it views, saved once."""
        root = arr
        while isinstance(root.base, np.ndarray):
            root = root.base
        itemsize = arr.dtype.itemsize
        offset = arr.__array_interface__["data"][0] - root.__array_interface__["data"][0]
        contiguous = root.flags.c_contiguous or root.flags.f_contiguous
        aligned = offset % itemsize == 0 and all(s % itemsize == 0 for s in arr.strides)
        shareable = root.base is None and root.dtype == arr.dtype and contiguous and aligned
        if not shareable:  # memory minigrad does not own the way a storage is (foreign buffers, reinterpreted dtypes)
            root, offset = np.ascontiguousarray(arr), 0
            arr = root
        key = self.storages.get(id(root))
        if key is None:
            key = self.storages[id(root)] = f"s{len(self.storages)}"
            self.arrays[key] = root.ravel(order="K")  # its memory, in memory order (a view: root is contiguous)
            self.alive.append(root)
        return key, offset // itemsize, [s // itemsize for s in arr.strides]


def save(obj: Any, f, pickle_module: Any = None, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True, _disable_byteorder_record: bool = False) -> None:
    """Save a tensor, a state dict, or nested dicts/lists/tuples of tensors and numbers to `f` (a path or file).

    The pickle arguments are accepted for `torch.save`'s signature and ignored: nothing is pickled.
    """
    w = _Writer()
    manifest = {"format": FORMAT, "version": VERSION, "root": _deep(w.encode, obj, limit=_SAVE_LIMIT)}
    arrays = dict(w.arrays)
    arrays[MANIFEST] = np.array(_deep(json.dumps, manifest, limit=_SAVE_LIMIT))
    if isinstance(f, (str, os.PathLike)):
        with _opened(f) as fh:  # np.savez would append ".npz" to a path without it
            np.savez(fh, **arrays)
    else:
        np.savez(f, **arrays)


def _opened(f):
    """`open(f, "wb")`, with PyTorch's RuntimeError when the file cannot be written (not an OSError)."""
    parent = os.path.dirname(os.fspath(f)) or "."
    if not os.path.isdir(parent):
        raise RuntimeError(f"Parent directory {parent} does not exist.")
    try:
        return open(f, "wb")
    except OSError as e:
        raise RuntimeError(f"[enforce fail at inline_container.cc:747] . open file failed with strerror: "
                           f"{e.strerror}") from None


# --------------------------------------------------------------------------------------------------
# Loading


def _name(f) -> str:
    return os.fspath(f) if isinstance(f, (str, os.PathLike)) else getattr(f, "name", "<file object>")


def _bad(f, what: str) -> RuntimeError:
    return RuntimeError(f"minigrad.load: {_name(f)} is not a valid minigrad file: {what}")


_CUDA = ("Attempting to deserialize object on a CUDA device but minigrad.cuda.is_available() is False. If you are "
         "running on a CPU-only machine, please use minigrad.load with map_location=minigrad.device('cpu') to map "
         "your storages to the CPU.")
_PICKLE_ARGS = ("encoding", "errors", "fix_imports", "buffers")


def _check_map_location(map_location) -> None:
    """PyTorch's rules on a CPU-only machine (minigrad's files hold CPU tensors, tagged 'cpu')."""

    if map_location is None or isinstance(map_location, device):
        return
    if isinstance(map_location, dict):
        map_location = map_location.get("cpu", "cpu")
        if isinstance(map_location, device):
            return
    if isinstance(map_location, str):
        if map_location == "cpu":
            return
        if map_location.startswith("cuda"):
            raise RuntimeError(_CUDA + "\n" + hint("minigrad runs on the CPU only; drop map_location or pass 'cpu'."))
        raise RuntimeError(f"don't know how to restore data location of minigrad.storage.UntypedStorage (tagged "
                           f"with {map_location})\n" + hint("minigrad runs on the CPU only; use map_location='cpu'."))
    if not callable(map_location):  # PyTorch calls anything else with (storage, location)
        raise TypeError(f"'{type(map_location).__name__}' object is not callable")


def load(f, map_location=None, pickle_module: Any = None, *, weights_only: bool | None = None,
         mmap: bool | None = None, **pickle_load_args: Any) -> Any:
    """Load what `minigrad.save` stored. A damaged or foreign file (e.g. a torch.save file) is a RuntimeError.

    The signature is `torch.load`'s: `map_location` may be None, 'cpu', a cpu device, a dict or a callable
    (a CUDA location raises PyTorch's error); `pickle_module`, `weights_only` and `mmap` are accepted (nothing
    is ever unpickled); extra keyword arguments are checked as PyTorch's unpickler would.
    """
    _check_map_location(map_location)
    if pickle_load_args:
        if weights_only is not False:
            warnings.warn("pickle_load_args only works if `weights_only=False`.", UserWarning, stacklevel=2)
        unknown = [k for k in pickle_load_args if k not in _PICKLE_ARGS]
        if unknown:
            raise TypeError(f"Unpickler.__init__() got an unexpected keyword argument '{unknown[0]}'")
    if mmap and not isinstance(f, (str, os.PathLike)):
        raise ValueError("f must be a file path in order to use the mmap argument")
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:  # our own handle: closed even when reading fails half-way
            return _load(fh, f)
    return _load(f, f)


# Nesting: saving and loading recurse once or twice per level (the manifest is JSON). PyTorch round-trips about 480
# levels of nested lists; minigrad saves what fits in _SAVE_LIMIT frames (deeper: Python's RecursionError, as
# PyTorch's pickler gives) and loads with twice the room, so whatever save writes, load reads.
_SAVE_LIMIT, _LOAD_LIMIT = 3000, 6000


def _deep(fn, *args, limit: int = _LOAD_LIMIT):
    """`fn(*args)` with room for deeply nested containers (`limit` frames), the interpreter's limit restored."""
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(limit)
    try:
        return fn(*args)
    finally:
        sys.setrecursionlimit(before)


def _load(fh, f) -> Any:
    return _deep(_load_archive, fh, f)


def _load_archive(fh, f) -> Any:
    start = fh.tell() if hasattr(fh, "tell") else 0
    magic = fh.read(6)
    fh.seek(start)
    if magic.startswith(b"\x93NUMPY"):
        raise _bad(f, "it holds a single NumPy array, not a minigrad archive (was it written by numpy.save?)")
    if not magic.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        raise _bad(f, "it is not a NumPy .npz archive")
    try:
        archive = zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError) as e:  # (zipfile's "zip file
        raise _bad(f, f"the archive is damaged or truncated ({e})") from None  # version 10.9": a flipped bit)
    with archive:
        members = {name.removesuffix(".npy"): name for name in archive.namelist()}
        if MANIFEST not in members:
            hint = " (it looks like a torch.save file: load it with torch and convert via .numpy())" if any(
                n.endswith("data.pkl") for n in archive.namelist()) else ""
            raise _bad(f, f"the archive has no '{MANIFEST}' manifest{hint}")
        manifest = _read_manifest(archive, members[MANIFEST], fh, f)
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise _bad(f, "the manifest does not describe a minigrad file")
        version = manifest.get("version")
        if type(version) is not int or version not in (1, VERSION):
            raise _bad(f, f"format version {version!r} is not supported (this minigrad reads versions 1 and {VERSION})")
        reader = _Reader(archive, members, fh, f)
        try:
            return reader.decode(manifest.get("root"))
        except RecursionError:
            raise _bad(f, "the manifest is nested too deeply") from None


def _read_manifest(archive: zipfile.ZipFile, member: str, fh, f) -> Any:
    arr = _read_array(archive, member, fh, f, manifest=True)
    if arr.shape != () or arr.dtype.kind != "U":
        raise _bad(f, "its manifest is not a JSON string")
    try:
        return json.loads(str(arr))
    except (ValueError, RecursionError) as e:
        raise _bad(f, f"its manifest cannot be read ({type(e).__name__}: {e})") from None


def _read_array(archive: zipfile.ZipFile, member: str, fh, f, *, manifest: bool = False) -> np.ndarray:
    """One `.npy` member, after checking its header: dtype, and a size the file can actually hold."""
    key = member.removesuffix(".npy")
    info = archive.getinfo(member)
    _check_member_size(info, fh, f, key)
    try:
        opened = archive.open(info)
    except Exception as e:  # noqa: BLE001 - zipfile's refusals of a flipped flag: "is encrypted", "compression method
        raise _bad(f, f"array {key!r} is damaged ({e})") from None  # is not supported" (RuntimeErrors), ...
    try:
        with opened as fp:
            version = np.lib.format.read_magic(fp)
            read_header = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
            if version not in read_header:
                raise _bad(f, f"array {key!r} has an unknown .npy format version {version}")
            shape, fortran, dtype = read_header[version](fp)
            if dtype.hasobject:
                raise _bad(f, f"array {key!r} cannot be read without pickle (it holds Python objects)")
            if not manifest and dtype not in SUPPORTED_DTYPES:
                raise _bad(f, f"array {key!r} has dtype {dtype.str} ({dtype}), which minigrad tensors cannot hold "
                              "(float16/32/64, int8/16/32/64, uint8 and bool, in native byte order)")
            count = int(np.prod(shape, dtype=object))
            declared = dtype.itemsize * count
            holds = info.file_size - fp.tell()
            if declared != holds:
                raise _bad(f, f"array {key!r} declares {declared} bytes of data but the file holds {holds}")
            arr = np.empty(count, dtype=dtype)
            got = _read_into(fp, memoryview(arr.view(np.uint8)))
    except RuntimeError:  # (the checks' own, naming the file)
        raise
    except Exception as e:  # noqa: BLE001 - any damage to a header (NumPy parses it: tokenize, SyntaxError, ...)
        raise _bad(f, f"array {key!r} is damaged ({type(e).__name__}: {e})") from None
    if got != declared:
        raise _bad(f, f"array {key!r} is truncated: {got} of {declared} bytes")
    return arr.reshape(shape, order="F" if fortran else "C")


def _read_into(fp, out: memoryview, chunk: int = 1 << 24) -> int:
    """Fill ``out`` from ``fp`` in chunks (no second copy of a large array); the number of bytes read."""
    pos = 0
    while pos < len(out):
        data = fp.read(min(chunk, len(out) - pos))
        if not data:
            break
        out[pos:pos + len(data)] = data
        pos += len(data)
    return pos


def _check_member_size(info: zipfile.ZipInfo, fh, f, key: str) -> None:
    """A member's size must fit the archive: stored data is as long as it claims, deflate expands <= 1032x."""
    fh.seek(0, os.SEEK_END)
    total = fh.tell()
    if info.compress_size > total:
        raise _bad(f, f"array {key!r} claims {info.compress_size} bytes, more than the whole file ({total})")
    if info.compress_type == zipfile.ZIP_STORED and info.file_size != info.compress_size:
        raise _bad(f, f"array {key!r} claims {info.file_size} bytes but stores {info.compress_size}")
    if info.file_size > _DEFLATE_MAX_RATIO * info.compress_size + 1024:
        raise _bad(f, f"array {key!r} claims {info.file_size} bytes, more than {info.compress_size} compressed "
                      "bytes can hold")


# The fields of each manifest entry and their types (bool is not an int here).
_FIELDS: dict[str, dict[str, tuple[type, ...]]] = {
    "none": {},
    "bool": {"value": (bool,)},
    "int": {"value": (int,)},
    "float": {"value": (float, int)},
    "str": {"value": (str,)},
    "list": {"items": (list,)},
    "tuple": {"items": (list,)},
    "dict": {"items": (list,)},
    "ordered_dict": {"items": (list,)},
    "ref": {"id": (int,)},
    "tensor": {},
}
_OPTIONAL = {"requires_grad": (bool,), "parameter": (bool,)}  # tensor fields with a default (False)
_TENSOR_V2 = {"id": (int,), "storage": (str,), "offset": (int,), "shape": (list,), "strides": (list,),
              "dtype": (str,)}


class _Reader:
    __slots__ = ("archive", "members", "fh", "f", "objects", "building", "storages", "arrays")

    def __init__(self, archive: zipfile.ZipFile, members: dict[str, str], fh, f) -> None:
        self.archive, self.members, self.fh, self.f = archive, members, fh, f
        self.objects: dict[int, Any] = {}  # reference number -> loaded object
        self.building: set[int] = set()  # tuples whose items are being loaded
        self.storages: dict[str, np.ndarray] = {}
        self.arrays: dict[str, Tensor] = {}  # version 1: array key -> tensor

    def bad(self, what: str) -> RuntimeError:
        return _bad(self.f, what)

    def check(self, node: Any) -> str:
        """The entry's kind, after checking that every field it needs has the right type."""
        if not isinstance(node, dict) or not isinstance(node.get("kind"), str):
            raise self.bad(f"the manifest has a malformed entry {_short(node)}")
        kind = node["kind"]
        if kind not in _FIELDS:
            raise self.bad(f"unknown entry kind {kind!r} in the manifest")
        fields = dict(_FIELDS[kind])
        if kind == "tensor":
            fields.update(_TENSOR_V2 if "storage" in node else {"key": (str,)})
        if kind in ("list", "tuple", "dict", "ordered_dict") and "id" in node:
            fields["id"] = (int,)
        optional = _OPTIONAL if kind == "tensor" else {}
        for name, types in {**fields, **optional}.items():
            if name not in node and name in optional:
                continue
            value = node.get(name)
            if name not in node or isinstance(value, bool) and bool not in types or not isinstance(value, types):
                want = " or ".join(t.__name__ for t in types)
                raise self.bad(f"a {kind!r} entry needs {name!r} of type {want}, got {_short(value)}")
        return kind

    def decode(self, node: Any) -> Any:
        kind = self.check(node)
        if kind == "none":
            return None
        if kind in ("bool", "int", "str"):
            return node["value"]
        if kind == "float":
            try:
                return float(node["value"])
            except OverflowError:  # an integer beyond any float (1 and 400 zeros)
                raise self.bad(f"a float entry holds {_short(node['value'])}, beyond a float's range") from None
        if kind == "ref":
            return self.reference(node["id"])
        if kind == "tensor":
            return self.tensor(node)
        if kind == "list":
            out: list = self.register(node, [])
            out.extend(self.decode(v) for v in node["items"])
            return out
        if kind == "tuple":
            ref = node.get("id")
            if ref is not None:
                self.building.add(ref)
            out_t = tuple(self.decode(v) for v in node["items"])
            self.building.discard(ref)
            return self.register(node, out_t)
        d = self.register(node, OrderedDict() if kind == "ordered_dict" else {})
        for pair in node["items"]:
            if not isinstance(pair, list) or len(pair) != 2:
                raise self.bad(f"a dict item must be a [key, value] pair, got {_short(pair)}")
            key = self.decode(pair[0])
            try:
                d[key] = self.decode(pair[1])
            except TypeError:
                raise self.bad(f"a dict key of type {type(key).__name__} cannot be used") from None
        return d

    def register(self, node: dict, obj: Any) -> Any:
        ref = node.get("id")
        if ref is not None:
            if ref in self.objects:
                raise self.bad(f"reference number {ref} is defined twice")
            self.objects[ref] = obj
        return obj

    def reference(self, ref: int) -> Any:
        if ref in self.building:
            raise self.bad(f"a tuple refers to itself (reference {ref}); PyTorch cannot load such a file either")
        if ref not in self.objects:
            raise self.bad(f"reference {ref} points to nothing saved before it")
        return self.objects[ref]

    def tensor(self, node: dict) -> Tensor:
        if "storage" in node:
            arr = self.view(node)
        else:  # version 1: one array per tensor
            key = node["key"]
            if key in self.arrays:
                return self.arrays[key]
            arr = self.read(key)
        requires_grad = node.get("requires_grad", False) and arr.dtype.kind == "f"
        if node.get("parameter", False):

            t = Parameter(make(arr), requires_grad=requires_grad)
        else:
            t = make(arr, None, requires_grad)
        if "storage" in node:
            self.register(node, t)
        else:
            self.arrays[node["key"]] = t
        return t

    def read(self, key: str) -> np.ndarray:
        member = self.members.get(key)
        if member is None or key == MANIFEST:
            raise self.bad(f"the manifest refers to array {key!r}, which the archive does not contain")
        return _read_array(self.archive, member, self.fh, self.f)

    def view(self, node: dict) -> np.ndarray:
        """The tensor's array: a view of its storage, checked to stay inside it."""
        key = node["storage"]
        storage = self.storages.get(key)
        if storage is None:
            storage = self.storages[key] = self.read(key)
            if storage.ndim != 1:
                raise self.bad(f"storage {key!r} is not a flat array")
        shape, strides, offset = node["shape"], node["strides"], node["offset"]
        if len(shape) != len(strides) or not all(type(n) is int for n in shape + strides):
            raise self.bad(f"a tensor's shape {_short(shape)} and strides {_short(strides)} do not match")
        if any(n < 0 for n in shape) or offset < 0:
            raise self.bad(f"a tensor has a negative size or offset ({_short(shape)}, {offset})")
        if not all(abs(n) < 2**63 for n in shape + strides + [offset]) or math.prod(shape) >= 2**63:
            raise self.bad(f"a tensor's shape {_short(shape)}, strides or offset are beyond int64")
        if node["dtype"] != storage.dtype.name:
            raise self.bad(f"a tensor of dtype {node['dtype']!r} views storage {key!r} of dtype {storage.dtype}")
        if 0 not in shape:
            low = offset + sum((n - 1) * s for n, s in zip(shape, strides) if s < 0)
            high = offset + sum((n - 1) * s for n, s in zip(shape, strides) if s > 0)
            if low < 0 or high >= storage.size:
                raise self.bad(f"a tensor of shape {shape} reaches outside its storage {key!r} "
                               f"({storage.size} elements)")
        elif offset > storage.size:
            raise self.bad(f"a tensor's offset {offset} lies outside its storage {key!r}")
        itemsize = storage.dtype.itemsize
        try:
            return np.lib.stride_tricks.as_strided(storage[offset:], shape=tuple(shape),
                                                   strides=tuple(s * itemsize for s in strides))
        except (ValueError, OverflowError) as e:  # NumPy's own limits (an array too big for it)
            raise self.bad(f"a tensor of shape {_short(shape)} cannot be made ({e})") from None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


_SAFE_GLOBALS: list = []


def add_safe_globals(safe_globals: list) -> None:
    """Classes and functions `load(..., weights_only=True)` may rebuild (PyTorch's allowlist). minigrad's checkpoints
    hold tensors and Python containers only, so the list is kept for code that reads it back."""
    _SAFE_GLOBALS.extend(safe_globals)


def get_safe_globals() -> list:
    return list(_SAFE_GLOBALS)


def clear_safe_globals() -> None:
    _SAFE_GLOBALS.clear()


class safe_globals:
    """`with serialization.safe_globals([...]):` the allowlist grows for the block only."""

    def __init__(self, safe_globals: list):
        self.safe_globals = list(safe_globals)

    def __enter__(self):
        self._before = get_safe_globals()
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc) -> None:
        _SAFE_GLOBALS[:] = self._before
