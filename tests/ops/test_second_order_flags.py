"""Issue 34: the flags of a gradient computed with create_graph=True, swept over the op registry against PyTorch 2.13.

For every differentiable op's samples, and every combination of its float inputs requiring grad, the gradient of
`out.sum()` with create_graph=True must have PyTorch's `requires_grad`, `is_leaf` and `grad_fn.name()`, and a double
backward (`autograd.grad(g.sum(), inputs)`) PyTorch's outcome: the same gradients (None where PyTorch gives None),
or the same exception type. A learner printing `x.grad.requires_grad` after `backward(create_graph=True)` sees
PyTorch's answer: PyTorch's fused backward ops (max_pool2d_with_indices_backward, convolution_backward,
native_batch_norm_backward, ...) take every differentiable input of their node, so their result requires grad when
one of them does, even where it does not depend on it (the fuzzer's "flags" findings, seed 1900).

CI runs each op's first sample plus FOUND (the cases the full sweep found); `make sweep-extremes` runs everything
(MINIGRAD_SWEEP=full). NAMES_DIFFER and KERNEL_DEPENDENT list what minigrad knowingly does otherwise, with the reason.
"""

from __future__ import annotations

import itertools
import os
import warnings

import numpy as np
import pytest
import sweeps

import minigrad
from minigrad.ops.registry import REGISTRY

FULL = os.environ.get("MINIGRAD_SWEEP") == "full"

# The gradient's flags agree, but not its node's name: minigrad writes these double backwards with its ops
# (MulBackward0, ViewBackward0, ...) where PyTorch records its fused op's node (docs/differences.md, "Second-order
# node names of fused backward ops"). The name is compared for a gradient minigrad's ops left constant (then
# minigrad records PyTorch's node, `ops/fused.py` `joins`), not where its own ops recorded a graph.
NAMES_DIFFER = {
    "nn.functional.elu": "EluBackwardBackward0", "_safe_softmax": "SoftmaxBackwardDataBackward0",
    "cdist": "CdistBackwardBackward0", "nn.functional.layer_norm": "NativeLayerNormBackwardBackward0",
    "nn.functional.batch_norm": "NativeBatchNormBackwardBackward0", "convolution": "ConvolutionBackwardBackward0",
    "nn.functional.conv1d": "ConvolutionBackwardBackward0", "nn.functional.conv2d": "ConvolutionBackwardBackward0",
    "nn.functional.conv_transpose1d": "ConvolutionBackwardBackward0",
    "nn.functional.conv_transpose2d": "ConvolutionBackwardBackward0",
    "nn.functional.scaled_dot_product_attention": "SoftmaxBackwardDataBackward0",
}
# PyTorch's kernel decides, not its formula: attention with a causal or boolean mask runs its CPU flash kernel, whose
# backward has no derivative (a torch::autograd::NotImplemented node: the gradient requires grad, a double backward
# raises); minigrad computes PyTorch's math path, differentiable twice (docs/differences.md). cdist's backward has no
# derivative in PyTorch (NotImplementedError); minigrad's, written with ops, differentiates. Not compared: these
# samples' flags (attention), the second order (both).
KERNEL_DEPENDENT = {"nn.functional.scaled_dot_product_attention": (3, 4, 5, 6)}
SECOND_ORDER_DIFFERS = {"nn.functional.scaled_dot_product_attention", "cdist"}

# Cases the full sweep found, fixed: CI runs them beside each op's first sample. (op key, sample, inputs requiring grad)
FOUND = [
    ("nn.functional.layer_norm", 1, (1,)), ("nn.functional.layer_norm", 1, (2,)),
    ("nn.functional.layer_norm", 2, (0, 2)), ("nn.functional.layer_norm", 3, (1,)),
    ("nn.functional.batch_norm", 0, (3,)), ("nn.functional.batch_norm", 2, (3, 4)),
    ("nn.functional.batch_norm", 3, (0,)), ("nn.functional.batch_norm", 3, (0, 4)),
    ("nn.functional.conv_transpose2d", 1, (0,)), ("nn.functional.conv_transpose1d", 0, (0, 1, 2)),
    ("nn.functional.max_pool2d", 2, (0,)), ("nn.functional.max_pool1d", 1, (0,)),
]


def _arrays(sample) -> list:
    rng = np.random.default_rng(0)
    out = []
    for spec in sweeps.specs(sample, rng):
        arr, requires_grad = spec.draw(rng)
        out.append((arr, requires_grad and arr.dtype.kind == "f"))
    return out


def _combinations(arrays: list) -> list:
    able = [k for k, (_, g) in enumerate(arrays) if g]
    return [c for r in range(1, len(able) + 1) for c in itertools.combinations(able, r)]


def _cases() -> list:
    out = []
    for key, op in REGISTRY.items():
        if not (op.public and op.differentiable):
            continue
        for i, s in enumerate(op.samples):
            if (i > 0 and not FULL) or i in KERNEL_DEPENDENT.get(key, ()):
                continue
            out += [pytest.param(key, i, combo, id=f"{key}-{i}-{combo}") for combo in _combinations(_arrays(s))]
    return out


def _seen(lib, key: str, sample, arrays: list, combo: tuple):
    """[(requires_grad, is_leaf, grad_fn name) or None per input requiring grad, the second order], or an exception
    type. The second order: one array or None per input, or the exception type."""
    tensors = [lib.tensor(a, requires_grad=k in combo) for k, (a, _) in enumerate(arrays)]
    wrt = [tensors[k] for k in combo]
    try:
        out = sweeps._call(REGISTRY[key], lib, sample, tensors)
        outs = [o for o in (out if isinstance(out, tuple) else (out,)) if isinstance(o, lib.Tensor) and o.requires_grad]
        grads = lib.autograd.grad([o.sum() for o in outs], wrt, create_graph=True, allow_unused=True) if outs else []
    except Exception as e:  # noqa: BLE001 - the exception's type is what is compared
        return type(e).__name__
    flags = [None if g is None else (g.requires_grad, g.is_leaf, g.grad_fn.name() if g.grad_fn else None)
             for g in grads]
    used = [g for g in grads if g is not None and g.requires_grad]
    try:
        second = lib.autograd.grad([g.sum() for g in used], wrt, allow_unused=True) if used else []
        second = [None if s is None else s.detach().numpy(force=True).astype(np.float64) for s in second]
    except Exception as e:  # noqa: BLE001
        second = type(e).__name__
    return flags, second


def check_flags(torch, key: str, i: int, combo: tuple) -> None:
    sample = REGISTRY[key].samples[i]
    arrays = _arrays(sample)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        want, got = _seen(torch, key, sample, arrays, combo), _seen(minigrad, key, sample, arrays, combo)
    if isinstance(want, str) or isinstance(got, str):
        assert want == got
        return
    for k, (w, g) in enumerate(zip(want[0], got[0])):
        assert (w is None) == (g is None), f"gradient {k}: torch {w}, minigrad {g}"
        if w is None:
            continue
        assert w[:2] == g[:2], f"gradient {k}: (requires_grad, is_leaf) torch {w[:2]}, minigrad {g[:2]}"
        if key not in NAMES_DIFFER or g[2] == NAMES_DIFFER[key]:
            assert w[2] == g[2], f"gradient {k}: grad_fn torch {w[2]}, minigrad {g[2]}"
    if key in SECOND_ORDER_DIFFERS:
        return
    w2, g2 = want[1], got[1]
    if isinstance(w2, str) or isinstance(g2, str):
        assert w2 == g2, f"second order: torch {w2}, minigrad {g2}"
        return
    assert [w is None for w in w2] == [g is None for g in g2], f"second order: None where: torch {w2}, minigrad {g2}"
    for w, g in zip(w2, g2):
        if w is not None:
            np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(("key", "i", "combo"), _cases())
def test_second_order_flags(torch, key, i, combo):
    check_flags(torch, key, i, combo)


@pytest.mark.parametrize(("key", "i", "combo"), FOUND)
def test_cases_the_full_sweep_found(torch, key, i, combo):
    check_flags(torch, key, i, combo)


def test_the_exceptions_name_ops_of_the_registry():
    assert set(NAMES_DIFFER) | set(KERNEL_DEPENDENT) | SECOND_ORDER_DIFFERS <= set(REGISTRY)


def test_max_pool_gradient_joins_the_graph_through_its_input(torch):
    # the fuzzer's seed 1900 program: x1.grad requires grad (MaxPool2DWithIndicesBackwardBackward0), a double
    # backward gives zeros, and with a grad_output that requires grad its gradient is the gather at the indices
    for lib in (torch, minigrad):
        x1 = lib.tensor(np.array([[[[0.0]]]]), requires_grad=True)
        with warnings.catch_warnings():  # (both warn of the reference cycle .grad makes under create_graph)
            warnings.simplefilter("ignore", UserWarning)
            lib.nn.functional.max_pool2d(x1, (2, 3), ceil_mode=True).mean().backward(create_graph=True)
        g = x1.grad
        assert (g.requires_grad, g.is_leaf) == (True, False)
        assert g.grad_fn.next_functions[1][0].name() == "MaxPool2DWithIndicesBackwardBackward0"
        assert lib.autograd.grad(g.sum(), x1)[0].tolist() == [[[[0.0]]]]
    got = []
    for lib in (torch, minigrad):
        x = lib.tensor(np.arange(16.0).reshape(1, 1, 4, 4), requires_grad=True)
        y = lib.nn.functional.max_pool2d(x, 2)
        gx = lib.autograd.grad((y * y).sum(), x, create_graph=True)[0]
        assert gx.grad_fn.name() == "MaxPool2DWithIndicesBackwardBackward0"
        got.append(lib.autograd.grad((gx * gx).sum(), x)[0].numpy())
    np.testing.assert_array_equal(got[1], got[0])
