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


# -- hardening (issue 14): every manifest value checked, unsupported dtypes, sizes, views, references ------


def _manifest_v2(root) -> bytes:
    import json

    buf = io.BytesIO()
    np.save(buf, np.array(json.dumps({"format": "minigrad-save", "version": 2, "root": root})))
    return buf.getvalue()


def _npy(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


def _tensor_entry(**fields):
    entry = {"kind": "tensor", "id": 0, "storage": "s0", "offset": 0, "shape": [2], "strides": [1],
             "dtype": "float32", "requires_grad": False, "parameter": False}
    entry.update(fields)
    return entry


@pytest.mark.parametrize("root, pattern", [
    ({"kind": "int", "value": "oops"}, "'int' entry needs 'value' of type int, got 'oops'"),
    ({"kind": "int", "value": True}, "'int' entry needs 'value' of type int, got True"),
    ({"kind": "bool", "value": 1}, "'bool' entry needs 'value' of type bool, got 1"),
    ({"kind": "str", "value": None}, "'str' entry needs 'value' of type str"),
    ({"kind": "float", "value": "1.5"}, "'float' entry needs 'value' of type float or int"),
    ({"kind": "list", "items": "abc"}, "'list' entry needs 'items' of type list"),
    ({"kind": "list", "items": [{"kind": "int"}]}, "'int' entry needs 'value'"),
    ({"kind": "dict", "items": [[{"kind": "str", "value": "a"}]]}, r"must be a \[key, value\] pair"),
    ({"kind": "dict", "items": [[{"kind": "list", "items": []}, {"kind": "none"}]]}, "dict key of type list"),
    ({"kind": "ref", "id": 3}, "reference 3 points to nothing saved before it"),
    ({"kind": "ref", "id": "0"}, "'ref' entry needs 'id' of type int"),
    (_tensor_entry(requires_grad="no"), "'tensor' entry needs 'requires_grad' of type bool, got 'no'"),
    (_tensor_entry(parameter=1), "'tensor' entry needs 'parameter' of type bool, got 1"),
    (_tensor_entry(shape="2"), "'tensor' entry needs 'shape' of type list"),
    (_tensor_entry(shape=[2.0]), "shape .* and strides .* do not match"),
    (_tensor_entry(shape=[3]), "reaches outside its storage 's0'"),
    (_tensor_entry(offset=1, shape=[2]), "reaches outside its storage 's0'"),
    (_tensor_entry(strides=[-1]), "reaches outside its storage 's0'"),
    (_tensor_entry(offset=-1, shape=[1]), "negative size or offset"),
    (_tensor_entry(dtype="float64"), "dtype 'float64' views storage 's0' of dtype float32"),
    (_tensor_entry(storage="__minigrad__"), "does not contain"),
    ("not a dict", "malformed entry 'not a dict'"),
])
def test_manifest_values_are_checked(tmp_path, root, pattern):
    path = _zip(tmp_path / "bad.pt", {"__minigrad__.npy": _manifest_v2(root),
                                      "s0.npy": _npy(np.array([1.0, 2.0], dtype=np.float32))})
    with pytest.raises(RuntimeError, match=pattern) as info:
        minigrad.load(path)
    assert str(path) in str(info.value) and "is not a valid minigrad file" in str(info.value)


def test_manifest_version_and_nesting_are_checked(tmp_path):
    import json

    buf = io.BytesIO()
    np.save(buf, np.array(json.dumps({"format": "minigrad-save", "version": "2", "root": {"kind": "none"}})))
    with pytest.raises(RuntimeError, match="format version '2' is not supported"):
        minigrad.load(_zip(tmp_path / "v.pt", {"__minigrad__.npy": buf.getvalue()}))
    deep = '{"kind": "list", "items": [' * 5000 + '{"kind": "none"}' + "]}" * 5000
    buf = io.BytesIO()
    np.save(buf, np.array('{"format": "minigrad-save", "version": 2, "root": ' + deep + "}"))
    with pytest.raises(RuntimeError, match="nested too deeply|cannot be read") as info:
        minigrad.load(_zip(tmp_path / "deep.pt", {"__minigrad__.npy": buf.getvalue()}))
    assert str(tmp_path / "deep.pt") in str(info.value)


@pytest.mark.parametrize("dtype", [">f4", ">i8", "uint32", "uint64", "uint16", "complex64",
                                   pytest.param("longdouble", marks=pytest.mark.skipif(
                                       np.dtype("longdouble").itemsize <= 8, reason="no float128 here"))])
def test_unsupported_dtypes_are_one_clear_error(tmp_path, dtype):
    arr = np.zeros(2, dtype=dtype)
    path = _zip(tmp_path / "dtype.pt", {"__minigrad__.npy": _manifest_v2(_tensor_entry(dtype=arr.dtype.name)),
                                        "s0.npy": _npy(arr)})
    with pytest.raises(RuntimeError, match=r"array 's0' has dtype .* which minigrad tensors cannot hold") as info:
        minigrad.load(path)
    assert str(path) in str(info.value)


def _with_npy_header(path, member: str, shape: tuple) -> None:
    """Rewrite one member's .npy header to declare ``shape`` (the data stays as it was)."""
    with zipfile.ZipFile(path) as z:
        files = {name: z.read(name) for name in z.namelist()}
    raw = files[member]
    fp = io.BytesIO(raw)
    version = np.lib.format.read_magic(fp)
    _, fortran, dtype = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                         else np.lib.format.read_array_header_2_0)(fp)
    data = raw[fp.tell():]
    head = io.BytesIO()
    np.lib.format.write_array_header_1_0(head, {"descr": np.lib.format.dtype_to_descr(dtype),
                                                "fortran_order": fortran, "shape": shape})
    files[member] = head.getvalue() + data
    _zip(path, files)


def test_a_declared_size_larger_than_the_file_is_refused_without_allocating_it(tmp_path):
    import tracemalloc

    path = tmp_path / "inflated.pt"
    minigrad.save({"w": minigrad.ones(1000)}, path)
    _with_npy_header(path, "s0.npy", (1 << 28,))  # 1 GiB of float32 declared, 4 kB stored
    tracemalloc.start()
    try:
        with pytest.raises(RuntimeError, match=r"array 's0' declares 1073741824 bytes of data but the file holds 4000"):
            minigrad.load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 50 * 2**20, f"loading allocated {peak} bytes"
    _with_npy_header(path, "s0.npy", (10,))  # declared smaller than stored: also refused
    with pytest.raises(RuntimeError, match="declares 40 bytes of data but the file holds 4000"):
        minigrad.load(path)


def test_a_zip_entry_claiming_more_than_it_stores_is_refused(tmp_path):
    path = tmp_path / "claims.pt"
    minigrad.save(minigrad.ones(4), path)
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        stored = z.getinfo("s0.npy").file_size
    pos = 0  # find s0.npy's central-directory record and make its uncompressed size claim 1 GiB
    while True:
        pos = raw.find(b"PK\x01\x02", pos + 1)
        assert pos > 0, "no central-directory record for s0.npy"
        name_len = int.from_bytes(raw[pos + 28: pos + 30], "little")
        if raw[pos + 46: pos + 46 + name_len] == b"s0.npy":
            break
    assert int.from_bytes(raw[pos + 24: pos + 28], "little") == stored
    raw[pos + 24: pos + 28] = (1 << 30).to_bytes(4, "little")
    path.write_bytes(bytes(raw))
    with pytest.raises(RuntimeError, match=rf"array 's0' claims 1073741824 bytes but stores {stored}") as info:
        minigrad.load(path)
    assert str(path) in str(info.value)


def _views(t):
    base = t.arange(12.0).reshape(3, 4)
    return {"base": base, "row": base[1], "col": base[:, 2], "t": base.t(), "block": base[1:, 2:],
            "expanded": base[0, :1].expand(3, 2), "flat": base.view(12)}


def test_views_of_one_base_share_memory_after_load_as_in_pytorch(tmp_path, torch):
    loaded = {}
    for lib in (torch, minigrad):
        path = tmp_path / f"views-{lib.__name__}.pt"
        lib.save(_views(lib), path)
        back = lib.load(path)
        back["base"].mul_(-1)  # one write to the base shows in every view, as PyTorch's storages do
        back["row"][0] = 100.0
        loaded[lib.__name__] = {k: v.numpy().copy() for k, v in back.items()}
    for key, want in loaded["torch"].items():
        np.testing.assert_array_equal(loaded["minigrad"][key], want, err_msg=key)


def test_a_view_saved_alone_keeps_its_values_and_saves_its_base(tmp_path, torch):
    for lib in (torch, minigrad):
        base = lib.arange(6.0).reshape(2, 3)
        path = tmp_path / f"alone-{lib.__name__}.pt"
        lib.save({"col": base[:, 1], "p": minigrad.nn.Parameter(minigrad.ones(2)) if lib is minigrad else
                  torch.nn.Parameter(torch.ones(2))}, path)
        back = lib.load(path)
        np.testing.assert_array_equal(back["col"].numpy(), [1.0, 4.0])
        assert back["p"].requires_grad and back["p"].is_leaf and type(back["p"]).__name__ == "Parameter"
    with np.load(tmp_path / "alone-minigrad.pt") as archive:  # the base's memory came along, as in PyTorch
        assert sorted(archive.files) == ["__minigrad__", "s0", "s1"] and archive["s0"].tolist() == list(range(6))


def test_shared_and_self_referencing_containers_load_like_pytorch(tmp_path, torch):
    results = {}
    for lib in (torch, minigrad):
        d: dict = {"w": lib.ones(2)}
        d["self"] = d
        loop: list = [1]
        loop.append(loop)
        shared = [lib.zeros(1), 2]
        obj = {"d": d, "loop": loop, "a": shared, "b": shared, "t": (shared, shared)}
        path = tmp_path / f"refs-{lib.__name__}.pt"
        lib.save(obj, path)
        r = lib.load(path)
        results[lib.__name__] = (r["d"]["self"] is r["d"], r["loop"][1] is r["loop"], r["a"] is r["b"],
                                 r["t"][0] is r["a"], r["a"][0] is r["b"][0], r["d"]["w"].tolist())
    assert results["minigrad"] == results["torch"] == (True, True, True, True, True, [1.0, 1.0])


def test_a_tuple_inside_itself_saves_but_does_not_load_as_in_pytorch(tmp_path):
    inner: list = []
    loop = (inner,)
    inner.append(loop)
    path = tmp_path / "tuple.pt"
    minigrad.save(loop, path)
    with pytest.raises(RuntimeError, match="a tuple refers to itself") as info:
        minigrad.load(path)
    assert str(path) in str(info.value)


def _outcome(fn):
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fn()
            exc = None
        except Exception as e:  # noqa: BLE001 - compared with PyTorch's
            exc = (type(e).__name__, str(e).split("\n")[0].replace("torch.", "minigrad."))
    return exc, [f"{w.category.__name__}: {w.message}" for w in caught]


@pytest.mark.parametrize("kwargs", [
    {"foo": 1}, {"encoding": "latin1"}, {"encoding": "latin1", "weights_only": False},
    {"map_location": "cuda"}, {"map_location": "cuda:0"}, {"map_location": "cpu"},
    {"map_location": {"cpu": "cuda:0"}}, {"map_location": {"cuda:0": "cpu"}}, {"map_location": 3},
    {"map_location": "xla"}, {"weights_only": True}, {"mmap": True},
])
def test_load_arguments_behave_as_pytorchs(tmp_path, torch, kwargs):
    outcomes = {}
    for lib in (torch, minigrad):
        path = tmp_path / f"args-{lib.__name__}.pt"
        lib.save({"a": lib.ones(2)}, path)
        buf = io.BytesIO(path.read_bytes())
        outcomes[lib.__name__] = _outcome(lambda lib=lib, buf=buf: lib.load(buf, **kwargs))
    assert outcomes["minigrad"] == outcomes["torch"]
    assert minigrad.load(tmp_path / "args-minigrad.pt", map_location=lambda storage, loc: storage)["a"].tolist() == [
        1.0, 1.0]


@pytest.mark.parametrize("kwargs", [{"foo": 1}, {"pickle_protocol": 4}, {"_use_new_zipfile_serialization": True}])
def test_save_arguments_behave_as_pytorchs(tmp_path, torch, kwargs):
    outcomes = {lib.__name__: _outcome(lambda lib=lib: lib.save({"a": lib.ones(1)}, tmp_path / "s.pt", **kwargs))
                for lib in (torch, minigrad)}
    assert outcomes["minigrad"] == outcomes["torch"]
