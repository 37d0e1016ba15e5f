"""Issue 34, sweep 1: every differentiable op of the registry at non-finite and extreme inputs, against PyTorch.

Each op's samples (the shapes of tests/ops/test_registry_sweeps.py) are drawn as usual, then the first element of
every float tensor that requires grad is set to one special value: ±0, ±inf, nan, the smallest subnormal, the
largest magnitudes (±1e300 in float64, ±3e38 in float32) and the domain edges ±1. The value, the gradient and the
second-order gradient (through create_graph) must agree with PyTorch 2.13 in nan-ness, in the sign of every zero
and infinity, and otherwise within the dtype's tolerance; an exception must be PyTorch's type; no NumPy warning may
reach the learner (RuntimeWarnings are errors here).

CI runs a fixed sample (each op's first sample, float64, five values); `make sweep-extremes` runs it all
(MINIGRAD_SWEEP=full). HUGE_VALUES_DIFFER, NEGATIVE_ZERO_DIFFERS and SECOND_ORDER_NOT_RECORDED list what minigrad
knowingly does otherwise, each with its reason.
"""

from __future__ import annotations

import os
import traceback
import warnings

import numpy as np
import pytest
import sweeps

import minigrad
from minigrad.ops.registry import REGISTRY

FULL = os.environ.get("MINIGRAD_SWEEP") == "full"
SPECIAL = {
    "float64": [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 1e300, -1e300, 1.0, -1.0],
    "float32": [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3e38, -3e38, 1.0, -1.0],
}
CI_VALUES = [-0.0, np.inf, -np.inf, np.nan, 1e300]

# Where minigrad knowingly differs from PyTorch here, and why (kept short; each is a known, explained gap).
# Values whose magnitude is at least 1e30 are not compared for these ops:
HUGE_VALUES_DIFFER = {
    "nn.functional.layer_norm": "a row whose variance overflows: PyTorch's result depends on its CPU kernel's vector "
                                "lanes (a row of 5 float64 gives 0., of 4 or 8 gives nan); minigrad gives nan "
                                "wherever mean² overflows (the issue's [1e-300, 1e300] row: test_edge_parity.py)",
}
# The sign of a zero at an input of -0.: binary_cross_entropy's second derivative there (PyTorch -inf, minigrad +inf:
# its double-backward formula differs in the order of its operations) and batch_norm's value (a zero whose sign
# depends on the batch mean's rounding). Not compared at -0. for these ops:
NEGATIVE_ZERO_DIFFERS = {"nn.functional.binary_cross_entropy", "nn.functional.batch_norm"}
# The first gradient is piecewise constant in the input, and PyTorch's fused backward op still records a node, so a
# double backward gives zeros: minigrad's too (avg_pool2d_backward, max_pool2d_backward, ops/fused.py `joins`;
# tests/ops/test_second_order_flags.py). None left: the second order is compared for every op.
SECOND_ORDER_NOT_RECORDED: set = set()


# PyTorch's kernel, not its formula, decides (docs/differences.md, "Attention and padded float32 convolutions at inf
# and nan"): its CPU flash attention (samples with a causal or boolean mask, or a nan), and its float32 oneDNN
# convolution, which skips padded positions. minigrad computes PyTorch's math path and its float64 convolution; these
# samples are not compared at non-finite, huge or subnormal inputs in these dtypes (CI's sample reaches none of them).
KERNEL_DEPENDENT = {  # op: (its samples, the dtypes)
    "nn.functional.scaled_dot_product_attention": ((3, 4, 5), ("float64", "float32")),
    "nn.functional.conv1d": ((1, 2), ("float32",)), "nn.functional.conv2d": ((2, 5), ("float32",)),
    "nn.functional.conv_transpose1d": ((0,), ("float32",)), "nn.functional.conv_transpose2d": ((1,), ("float32",)),
}


# batch_norm: PyTorch's CPU kernel's order of operations (docs/differences.md, "batch_norm at zeros, subnormal and
# huge inputs"): an (N, C) input's statistics are float32 partial sums, one per thread (so they change with
# torch.get_num_threads()), its gradient's sums run over SIMD lanes, and its float64 x·alpha + beta is one FMA; at
# these values a zero's sign (or a huge value's last bits) follows them. Not compared at these values, in these dtypes:
ORDER_DEPENDENT = {"nn.functional.batch_norm": {"float32": (0.0, 1e-45, -1e-45, 3e38), "float64": (-5e-324, 1e300)}}


def _order_dependent(key: str, dtype: str, value: float) -> bool:
    return value in ORDER_DEPENDENT.get(key, {}).get(dtype, ()) and not (value == 0 and np.signbit(value))


def _kernel_dependent(key: str, i: int, dtype: str, value: float) -> bool:
    samples, dtypes = KERNEL_DEPENDENT.get(key, ((), ()))
    special = not np.isfinite(value) or abs(value) >= 1e30 or 0 < abs(value) < 1e-30
    return special and i in samples and dtype in dtypes


def _float_samples() -> list:
    return [(key, i, op, s) for key, op in REGISTRY.items() if op.public and op.differentiable
            for i, s in enumerate(op.samples)
            if any(d not in ("int", "bool", "index", "const", "positive_const") for _, d in s.tensors)]


def _cases() -> list:
    out = []
    for key, i, op, s in _float_samples():
        if not FULL and i > 0:
            continue
        for dtype in ("float64", "float32") if FULL else ("float64",):
            for v in SPECIAL[dtype] if FULL else CI_VALUES:
                if _kernel_dependent(key, i, dtype, v) or _order_dependent(key, dtype, v):
                    continue
                if (key in HUGE_VALUES_DIFFER and abs(v) >= 1e30) or (
                        key in NEGATIVE_ZERO_DIFFERS and v == 0 and np.signbit(v)):
                    continue
                out.append(pytest.param(key, op, s, dtype, v, id=f"{key}-{i}-{dtype}-{v!r}"))
    return out


def _arrays(sample, dtype: str, value: float) -> list:
    rng = np.random.default_rng(0)
    out = []
    for spec in sweeps.specs(sample, rng, dtype):
        arr, requires_grad = spec.draw(rng)
        requires_grad = requires_grad and arr.dtype.kind == "f"
        if requires_grad and arr.size:
            arr = np.array(arr, copy=True)
            arr.reshape(-1)[0] = value
        out.append((arr, requires_grad))
    return out


def _run(lib, op, sample, arrays: list):
    """(outputs, first gradients, second gradients) as arrays (None where there is none), or the exception type."""
    tensors = [lib.tensor(a, requires_grad=g) for a, g in arrays]
    wrt = [t for t in tensors if t.requires_grad]
    try:
        out = sweeps._call(op, lib, sample, tensors)
        outs = [o for o in (out if isinstance(out, tuple) else (out,)) if isinstance(o, lib.Tensor)]
        diff = [o for o in outs if o.requires_grad]
        grads = lib.autograd.grad([o.sum() for o in diff], wrt, create_graph=True, allow_unused=True) if diff else []
    except Exception as e:  # noqa: BLE001 - the exception's type is what is compared
        return _raised(e)
    used = [g for g in grads if g is not None and g.requires_grad]
    try:
        second = _seen(lib.autograd.grad([g.sum() for g in used], wrt, allow_unused=True) if used else [])
    except Exception as e:  # noqa: BLE001 - (PyTorch has no double backward for some fused kernels: then not compared)
        second = _raised(e)
    return _seen(outs), _seen(grads), second


def _raised(e: Exception) -> str:
    if isinstance(e, RuntimeWarning):  # NumPy's: where it came from
        tb = traceback.extract_tb(e.__traceback__)
        where = [f"{f.filename.rsplit('/', 2)[-1]}:{f.lineno}" for f in tb if "minigrad" in f.filename]
        return f"RuntimeWarning: {e} (at {where[-1] if where else '?'})"
    return type(e).__name__


def _seen(ts) -> list:
    out = []
    for t in ts:
        if t is not None:
            t = t.detach()
            t = t.numpy(force=True) if getattr(t, "_is_zerotensor", lambda: False)() else t.numpy()
        out.append(None if t is None else np.array(t, dtype=np.float64, copy=True))
    return out


def _differs(want: np.ndarray | None, got: np.ndarray | None, rtol: float, atol: float) -> str | None:
    if want is None or got is None:
        return None if want is None and got is None else f"torch {want}, minigrad {got}"
    if want.shape != got.shape:
        return f"shape {want.shape} vs {got.shape}"
    want, got = want.reshape(-1), got.reshape(-1)
    nan_w, nan_g = np.isnan(want), np.isnan(got)
    bad = nan_w != nan_g
    both = ~nan_w & ~nan_g
    bad |= both & (np.signbit(want) != np.signbit(got)) & (((want == 0) & (got == 0)) | np.isinf(want) | np.isinf(got))
    bad |= both & (np.isinf(want) != np.isinf(got))
    fin = both & np.isfinite(want) & np.isfinite(got)
    bad[fin] |= ~np.isclose(got[fin], want[fin], rtol=rtol, atol=atol)
    if bad.any():
        i = np.flatnonzero(bad)[0]
        return f"at {i}: torch {want[i]!r}, minigrad {got[i]!r}"
    return None


def check_extreme(torch, key: str, op, sample, dtype: str, value: float) -> None:
    arrays = _arrays(sample, dtype, value)
    want = _run(torch, op, sample, arrays)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # a NumPy warning reaching the learner fails the case
        got = _run(minigrad, op, sample, arrays)
    if isinstance(want, str) or isinstance(got, str):
        shown = [w if isinstance(w, str) else "returns" for w in (want, got)]
        assert want == got, f"outcome: torch {shown[0]}, minigrad {shown[1]}"
        return
    rtol, atol = (1e-4, 1e-5) if dtype == "float32" else (1e-7, 1e-12)
    orders = 2 if key in SECOND_ORDER_NOT_RECORDED else 3
    if isinstance(want[2], str):  # PyTorch cannot differentiate this gradient (flash attention's backward): skipped
        orders = 2
    for what, w_list, g_list in list(zip(("value", "gradient", "second-order gradient"), want, got))[:orders]:
        assert not isinstance(g_list, str), f"{what}: minigrad raised {g_list}"
        assert len(w_list) == len(g_list), f"{what}: {len(w_list)} vs {len(g_list)} tensors"
        for k, (w, g) in enumerate(zip(w_list, g_list)):
            problem = _differs(w, g, rtol, atol)
            assert problem is None, f"{what} {k}: {problem}"


@pytest.mark.parametrize(("key", "op", "sample", "dtype", "value"), _cases())
def test_extreme_values(torch, key, op, sample, dtype, value):
    check_extreme(torch, key, op, sample, dtype, value)


@pytest.mark.parametrize("value", [np.inf, -np.inf, np.nan, 1e300])
@pytest.mark.parametrize("i", [3, 4, 5])
def test_attention_is_pytorchs_math_path_where_its_flash_kernel_differs(torch, i, value):
    # docs/differences.md: where KERNEL_DEPENDENT leaves attention out, minigrad's numbers are PyTorch's math path's
    from torch.nn.attention import SDPBackend, sdpa_kernel

    key = "nn.functional.scaled_dot_product_attention"
    with sdpa_kernel(SDPBackend.MATH):
        check_extreme(torch, key, REGISTRY[key], REGISTRY[key].samples[i], "float64", value)


# Cases of the full sweep that failed before issue 34's fresh-seed round fixed them (PyTorch's formulas' and kernels'
# order of operations): CI runs them beside its fixed sample. (op key, sample, dtype, value)
FIXED_IN_THE_FULL_SWEEP = [
    ("xlogy", 1, "float64", 0.0), ("xlogy", 2, "float32", -0.0), ("addcdiv", 1, "float64", 5e-324),
    ("addcdiv", 1, "float32", -3e38), ("addcmul", 1, "float32", 3e38),
    ("nn.functional.smooth_l1_loss", 1, "float64", np.nan),
    ("cdist", 1, "float64", np.nan), ("cdist", 1, "float32", 1.0), ("cdist", 0, "float64", 1e300),
    ("nn.functional.layer_norm", 3, "float64", -0.0), ("nn.functional.layer_norm", 3, "float32", 1e-45),
    ("nn.functional.batch_norm", 0, "float64", 0.0), ("nn.functional.batch_norm", 2, "float64", 1.0),
    ("nn.functional.batch_norm", 2, "float64", np.nan), ("nn.functional.batch_norm", 3, "float32", np.inf),
    ("nn.functional.batch_norm", 4, "float64", -1e300),
]


@pytest.mark.parametrize(("key", "i", "dtype", "value"), FIXED_IN_THE_FULL_SWEEP)
def test_cases_the_full_sweep_found(torch, key, i, dtype, value):
    check_extreme(torch, key, REGISTRY[key], REGISTRY[key].samples[i], dtype, value)


def test_the_exceptions_name_ops_of_the_registry():
    named = (set(HUGE_VALUES_DIFFER) | SECOND_ORDER_NOT_RECORDED | NEGATIVE_ZERO_DIFFERS | set(KERNEL_DEPENDENT)
             | set(ORDER_DEPENDENT))
    assert named <= {key for key, *_ in _float_samples()}
