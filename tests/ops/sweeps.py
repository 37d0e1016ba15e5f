"""The per-op checks the registry sweeps run (loaded by conftest.py as ``sweeps``).

Each check takes a declared op (``minigrad.ops.registry.Op``) and one of its samples, so a test can run
them on an op it declares itself (``declare(..., register=False)``): a new op needs no test edits to
be covered.

- ``check_parity(parity, op, sample)``: the op against PyTorch 2.13 in float64, through opcheck's
  Parity (values, dtypes, flags, node names, next_functions, gradients).
- ``check_gradcheck(op, sample)`` / ``check_gradgradcheck(op, sample)``: first and second derivatives
  against finite differences (float64, minigrad only).
- ``check_float32(parity, op, sample)``: the op in float32 against PyTorch (values and gradients,
  float32 tolerances).
"""

from __future__ import annotations

import numpy as np
from opcheck import C, F, Int, K, P, Spec

import minigrad
from minigrad.autograd import gradcheck, gradgradcheck


def specs(sample, rng: np.random.Generator, dtype: str = "float64") -> list:
    """opcheck input specs for a sample's tensors (see registry.Sample for the domains)."""
    out = []
    first = sample.tensors[0][0] if sample.tensors else ()
    for k, (shape, domain) in enumerate(sample.tensors):
        if domain == "real":
            out.append(F(*shape, dtype=dtype))
        elif domain == "positive":
            out.append(P(*shape, dtype=dtype))
        elif domain == "unit":
            out.append(F(*shape, lo=-0.9, hi=0.9, dtype=dtype))
        elif domain == "away":
            out.append(F(*shape, away=0.1, dtype=dtype))
        elif domain == "probability":
            out.append(F(*shape, lo=0.05, hi=0.95, dtype=dtype))
        elif domain == "const":
            out.append(C(*shape, dtype=dtype))
        elif domain == "positive_const":  # a positive float tensor that does not require grad (a running variance)
            out.append(C(*shape, lo=0.5, hi=2.0, dtype=dtype))
        elif domain == "distinct":  # a permutation of a grid, shifted per tensor: no ties within or across, gaps 0.03+
            n = int(np.prod(shape)) if shape else 1
            values = (rng.permutation(n) - n / 2) / 10 + 0.03 * k
            out.append(K(values.reshape(shape).astype(dtype), grad=True))
        elif domain == "int":
            out.append(Int(*shape))
        elif domain == "index":  # valid class indices into the first tensor's last dim
            out.append(Int(*shape, lo=0, hi=max(first[-1] - 1, 0)))
        elif domain == "bool":
            out.append(Spec(shape, dtype="bool", grad=False))
        else:
            raise ValueError(f"unknown sample domain {domain!r}")
    return out


def _call(op, lib, sample, tensors: list):
    """Call the op as the sample says: tensors first (as one list for cat/stack; the last ones by keyword when the
    sample names them), then the other arguments."""
    tensors = list(tensors)
    if op.name.endswith("_"):  # an in-place op: on a copy, since a leaf that requires grad refuses in-place writes
        tensors[0] = tensors[0].clone()
    if sample.as_list:
        return op.call(lib, tensors, *sample.args, **sample.kwargs)
    n = len(tensors) - len(sample.keywords)
    named = dict(zip(sample.keywords, tensors[n:]))
    return op.call(lib, *tensors[:n], *sample.args, **named, **sample.kwargs)


def _fn(op, sample):
    return lambda lib, *tensors: _call(op, lib, sample, tensors)


def check_parity(parity, op, sample) -> None:
    """The op against PyTorch on the sample, float64; the gradients too when the op is differentiable."""
    rng = parity.rng_for()
    parity.check(_fn(op, sample), *specs(sample, rng), backward=op.differentiable)


def check_float32(parity, op, sample) -> None:
    rng = parity.rng_for()
    parity.check(_fn(op, sample), *specs(sample, rng, "float32"), backward=op.differentiable)


def _inputs(sample, seed: int = 0) -> tuple[list, list]:
    """(all tensor arguments, the float ones that require grad), float64, drawn as the sample says."""
    rng = np.random.default_rng(seed)
    tensors, wrt = [], []
    for spec in specs(sample, rng):
        arr, requires_grad = spec.draw(rng)
        t = minigrad.tensor(arr, requires_grad=requires_grad and arr.dtype.kind == "f")
        tensors.append(t)
        if t.requires_grad:
            wrt.append(t)
    return tensors, wrt


def _as_function(op, sample, tensors: list, wrt: list):
    """The op as a function of the tensors that require grad (the others held fixed), for gradcheck."""
    positions = [i for i, t in enumerate(tensors) if t.requires_grad]

    def f(*xs):
        args = list(tensors)
        for i, x in zip(positions, xs):
            args[i] = x
        out = _call(op, minigrad, sample, args)
        outs = out if isinstance(out, tuple) else (out,)
        return tuple(o for o in outs if isinstance(o, minigrad.Tensor) and o.requires_grad)

    return f


def check_gradcheck(op, sample) -> None:
    tensors, wrt = _inputs(sample)
    if wrt:
        assert gradcheck(_as_function(op, sample, tensors, wrt), tuple(wrt))


def check_gradgradcheck(op, sample) -> None:
    tensors, wrt = _inputs(sample)
    if wrt:
        assert gradgradcheck(_as_function(op, sample, tensors, wrt), tuple(wrt))
