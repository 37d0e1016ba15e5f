"""Issue 34, sweep 3: damaged files. Every truncation and every single-bit flip of a saved tensor, a state dict
and a nested container gives the documented RuntimeError naming the file, or loads the same data (a flip in a
value's bytes changes that value: it must then load as the same structure). CI runs a sample of the positions
(every 7th truncation, every 13th bit); MINIGRAD_SWEEP=full (make sweep-extremes) runs them all. Also: whatever
save writes, load reads (deep nesting), and the file errors of save and load are PyTorch's."""

from __future__ import annotations

import io
import os
import stat
from collections import OrderedDict

import numpy as np
import pytest

import minigrad

FULL = os.environ.get("MINIGRAD_SWEEP") == "full"
NAME = "damaged.pt"


def _objects() -> dict:
    net = minigrad.nn.Sequential(minigrad.nn.Linear(2, 2), minigrad.nn.Tanh(), minigrad.nn.Linear(2, 1))
    t = minigrad.arange(6.0).reshape(2, 3)
    return {"tensor": t,
            "state_dict": net.state_dict(),
            "nested": {"a": [t, t[0], (1, 2.5, "x")], "b": OrderedDict(k=minigrad.ones(2, dtype=minigrad.int64)),
                       "c": None}}


def _saved(obj) -> bytes:
    b = io.BytesIO()
    minigrad.save(obj, b)
    return b.getvalue()


def _structure(obj):
    """What must not change when a flip lands in a value's bytes: the containers, keys, shapes and dtypes."""
    if isinstance(obj, minigrad.Tensor):
        return ("tensor", tuple(obj.shape), str(obj.dtype))
    if isinstance(obj, dict):
        return (type(obj).__name__, [(k, _structure(v)) for k, v in obj.items()])
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [_structure(v) for v in obj])
    return obj


def _load_damaged(data: bytes, original) -> None:
    f = io.BytesIO(data)
    f.name = NAME
    try:
        loaded = minigrad.load(f)
    except RuntimeError as e:
        assert NAME in str(e), f"the error does not name the file: {e}"
        return
    assert _structure(loaded) == _structure(original)


@pytest.mark.parametrize("kind", ["tensor", "state_dict", "nested"])
def test_every_truncation_is_refused(kind):
    obj = _objects()[kind]
    data = _saved(obj)
    for n in range(0, len(data), 1 if FULL else 7):
        f = io.BytesIO(data[:n])
        f.name = NAME
        with pytest.raises(RuntimeError, match=NAME):
            minigrad.load(f)


@pytest.mark.parametrize("kind", ["tensor", "state_dict", "nested"])
def test_every_bit_flip_is_refused_or_loads_the_same_structure(kind):
    obj = _objects()[kind]
    data = bytearray(_saved(obj))
    for bit in range(0, 8 * len(data), 1 if FULL else 13):
        damaged = bytearray(data)
        damaged[bit // 8] ^= 1 << (bit % 8)
        _load_damaged(bytes(damaged), obj)


@pytest.mark.parametrize("header", [b"{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }",
                                    b"{'descr': '<f8', 'fortran_order': False, 'shape': (3,", b"{'descr': \"<f8",
                                    b"\x00\x01{'descr'"], ids=["ok", "unclosed", "string", "bytes"])
def test_a_damaged_npy_header_names_the_file(header):
    # NumPy parses a header with Python's tokenizer: its TokenError and SyntaxError are not the promised error
    data = _saved(minigrad.ones(3, dtype=minigrad.float64))
    good = b"{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }"
    at = data.find(good)
    assert at > 0
    damaged = data[:at] + header.ljust(len(good), b" ")[:len(good)] + data[at + len(good):]
    _load_damaged(damaged, minigrad.ones(3, dtype=minigrad.float64))


@pytest.mark.parametrize("entry", [
    '{"kind": "float", "value": 1' + "0" * 400 + "}",
    '{"kind": "tensor", "id": 0, "storage": "s0", "offset": 1' + "0" * 30 + ', "shape": [1], "strides": [1], '
    '"dtype": "float32", "requires_grad": false, "parameter": false}',
    '{"kind": "tensor", "id": 0, "storage": "s0", "offset": 0, "shape": [4294967296, 4294967296], "strides": [0, 0], '
    '"dtype": "float32", "requires_grad": false, "parameter": false}',
])
def test_a_manifest_beyond_any_range_names_the_file(entry):
    import json
    import zipfile

    b = io.BytesIO()
    minigrad.save(minigrad.ones(1), b)
    src = zipfile.ZipFile(io.BytesIO(b.getvalue()))
    manifest = json.loads(str(np.load(io.BytesIO(src.read("__minigrad__.npy")))))
    text = json.dumps(manifest).replace(json.dumps(manifest["root"]), entry)
    out = io.BytesIO()
    arrays = {n.removesuffix(".npy"): np.load(io.BytesIO(src.read(n))) for n in src.namelist()}
    arrays["__minigrad__"] = np.array(text)
    np.savez(out, **arrays)
    f = io.BytesIO(out.getvalue())
    f.name = NAME
    with pytest.raises(RuntimeError, match=NAME):
        minigrad.load(f)


@pytest.mark.parametrize("depth", [400, 480, 1000])
def test_what_save_writes_load_reads_deep_nesting(depth):
    nested: list = []
    cur = nested
    for _ in range(depth):
        cur.append([minigrad.ones(1)])
        cur = cur[-1]
    b = io.BytesIO()
    try:
        minigrad.save(nested, b)
    except RecursionError:  # deeper than Python's own encoder goes (3.12 stops before 3.11): refused, as torch's
        assert depth > 480  # pickler refuses; what torch round-trips (about 480 levels) must always save
        return
    b.seek(0)
    loaded = minigrad.load(b)
    levels = 0
    while isinstance(loaded, list) and loaded:
        loaded, levels = loaded[-1], levels + 1
    assert levels == depth + 1


def test_save_into_a_missing_or_unwritable_path(torch, tmp_path):
    for path in (tmp_path / "missing" / "x.pt", tmp_path):  # (a directory: unwritable even for root)
        want = got = None
        try:
            torch.save(torch.ones(1), path)
        except Exception as e:  # noqa: BLE001 - compared
            want = (type(e).__name__, str(e).replace(str(tmp_path), "<tmp>"))
        try:
            minigrad.save(minigrad.ones(1), path)
        except Exception as e:  # noqa: BLE001 - compared
            got = (type(e).__name__, str(e).replace(str(tmp_path), "<tmp>"))
        assert want == got
    readonly = tmp_path / "ro"
    readonly.mkdir()
    readonly.chmod(stat.S_IRUSR | stat.S_IXUSR)
    if not os.access(readonly, os.W_OK):  # (root may write anywhere)
        with pytest.raises(RuntimeError, match="open file failed"):
            minigrad.save(minigrad.ones(1), readonly / "x.pt")
