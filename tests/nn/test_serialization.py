"""minigrad.save / minigrad.load: round trips of tensors and state dicts, and clear errors for bad files."""

from __future__ import annotations

import io
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import minigrad
import minigrad.nn as nn


def _roundtrip(obj, tmp_path, name="obj.pt"):
    path = tmp_path / name
    minigrad.save(obj, path)
    return minigrad.load(path)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "bool", "float16", "uint8"])
def test_tensor_round_trip_keeps_values_dtype_and_shape(tmp_path, dtype):
    arr = (np.arange(24).reshape(2, 3, 4) % 3).astype(dtype)
    t = _roundtrip(minigrad.tensor(arr), tmp_path)
    assert t.dtype == getattr(minigrad, dtype) and t.shape == (2, 3, 4)
    np.testing.assert_array_equal(t.numpy(), arr)


def test_special_tensors_round_trip(tmp_path):
    objs = {
        "scalar": minigrad.tensor(3.5),
        "empty": minigrad.zeros(0, 3),
        "noncontiguous": minigrad.arange(12.0).view(3, 4).t(),
        "requires_grad": minigrad.ones(2, requires_grad=True),
        "nan": minigrad.tensor([float("nan"), float("inf")]),
    }
    back = _roundtrip(objs, tmp_path)
    assert back["scalar"].shape == () and back["scalar"].item() == 3.5
    assert back["empty"].shape == (0, 3)
    np.testing.assert_array_equal(back["noncontiguous"].numpy(), objs["noncontiguous"].numpy())
    assert back["requires_grad"].requires_grad and back["requires_grad"].is_leaf
    assert np.isnan(back["nan"].numpy()[0]) and np.isinf(back["nan"].numpy()[1])


def test_nested_containers_and_numbers_round_trip(tmp_path):
    t = minigrad.randn(3)
    obj = {"epoch": 7, "lr": 0.01, "name": "run-1", "done": False, "none": None, "ratio": float("inf"),
           "history": [1.5, 2.5], "pair": (t, 3), 4: "int key", "shared": [t, t],
           "od": OrderedDict([("b", 1), ("a", 2)])}
    back = _roundtrip(obj, tmp_path)
    assert list(back) == list(obj)
    assert back["epoch"] == 7 and back["lr"] == 0.01 and back["name"] == "run-1" and back["done"] is False
    assert back["none"] is None and back["ratio"] == float("inf") and back[4] == "int key"
    assert isinstance(back["pair"], tuple) and back["pair"][1] == 3 and minigrad.equal(back["pair"][0], t)
    assert back["shared"][0] is back["shared"][1]  # one tensor saved once stays one tensor
    assert isinstance(back["od"], OrderedDict) and list(back["od"]) == ["b", "a"]


def test_state_dict_and_parameters_round_trip(tmp_path):
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    opt = minigrad.optim.Adam(model.parameters(), lr=0.01)
    model(minigrad.randn(5, 3)).sum().backward()
    opt.step()
    back = _roundtrip({"model": model.state_dict(), "optim": opt.state_dict(), "w": model[0].weight}, tmp_path)
    assert isinstance(back["model"], OrderedDict) and list(back["model"]) == list(model.state_dict())
    clone = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    clone.load_state_dict(back["model"])
    x = minigrad.randn(2, 3)
    assert minigrad.equal(clone(x), model(x))
    assert back["optim"]["param_groups"] == opt.state_dict()["param_groups"]
    assert back["optim"]["state"][0]["step"].item() == 1
    assert isinstance(back["w"], nn.Parameter) and back["w"].requires_grad


def test_file_objects_and_paths_without_npz_suffix(tmp_path):
    buf = io.BytesIO()
    minigrad.save([minigrad.ones(2)], buf)
    buf.seek(0)
    assert minigrad.equal(minigrad.load(buf)[0], minigrad.ones(2))
    minigrad.save(minigrad.ones(1), str(tmp_path / "model.pt"))
    assert (tmp_path / "model.pt").exists() and not (tmp_path / "model.pt.npz").exists()


def test_unsupported_objects_are_refused_when_saving(tmp_path):
    with pytest.raises(TypeError, match="minigrad.save cannot store an object of type .*Sequential.*never pickles"):
        minigrad.save(nn.Sequential(), tmp_path / "m.pt")
    with pytest.raises(TypeError, match="cannot store an object of type builtins.set"):
        minigrad.save({1, 2}, tmp_path / "s.pt")


def _write(path, data: bytes):
    path.write_bytes(data)
    return path


def _zip(path, files: dict):
    with zipfile.ZipFile(path, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    return path


def test_corrupt_and_foreign_files_give_clear_errors(tmp_path, torch):
    good = tmp_path / "good.pt"
    minigrad.save({"w": minigrad.ones(3)}, good)
    raw = good.read_bytes()
    manifest_npy = io.BytesIO()
    np.save(manifest_npy, np.array('{"format": "something-else"}'))
    torch_file = tmp_path / "torch.pt"
    torch.save({"w": torch.ones(2)}, torch_file)
    object_npy = io.BytesIO()
    np.save(object_npy, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    cases = {
        "empty": (_write(tmp_path / "empty.pt", b""), "not a NumPy .npz archive|damaged"),
        "text": (_write(tmp_path / "text.pt", b"hello, world" * 10), "not a NumPy .npz archive"),
        "truncated": (_write(tmp_path / "trunc.pt", raw[: len(raw) // 2]), "damaged or truncated"),
        "torch.save": (torch_file, "no '__minigrad__' manifest .*torch.save file"),
        "plain npz": (_zip(tmp_path / "plain.npz", {"x.npy": b""}), "no '__minigrad__' manifest"),
        "foreign manifest": (_zip(tmp_path / "foreign.pt", {"__minigrad__.npy": manifest_npy.getvalue()}),
                             "does not describe a minigrad file"),
        "npy": (_write(tmp_path / "one.npy", manifest_npy.getvalue()), "single NumPy array"),
        "pickled array": (_zip(tmp_path / "pickled.pt", {
            "__minigrad__.npy": _manifest_npy({"kind": "tensor", "key": "t0"}), "t0.npy": object_npy.getvalue()}),
            "cannot be read without pickle"),
        "missing array": (_zip(tmp_path / "missing.pt", {
            "__minigrad__.npy": _manifest_npy({"kind": "tensor", "key": "t0"})}), "does not contain"),
        "bad entry": (_zip(tmp_path / "entry.pt", {"__minigrad__.npy": _manifest_npy({"kind": "lambda"})}),
                      "unknown entry kind 'lambda'"),
    }
    for name, (path, pattern) in cases.items():
        with pytest.raises(RuntimeError, match=pattern) as info:
            minigrad.load(path)
        assert "is not a valid minigrad file" in str(info.value), name
    with pytest.raises(FileNotFoundError):
        minigrad.load(tmp_path / "nope.pt")


def _manifest_npy(root) -> bytes:
    import json

    buf = io.BytesIO()
    np.save(buf, np.array(json.dumps({"format": "minigrad-save", "version": 1, "root": root})))
    return buf.getvalue()
