"""Workload bodies, hand-written NumPy references and correctness checks for the benchmark.

Every body is written once against the PyTorch-style API and takes the library module as an
argument (``lib`` is ``minigrad`` or ``torch``), so the timed code is identical for every engine.
Each body has a NumPy twin whose forward *and* backward are written by hand: it is both the
reference the engines' gradients are checked against and the timing baseline ("the physical limit":
what the same arithmetic costs with no autograd bookkeeping at all).

Nothing in this module times anything; ``bench/run.py`` does, and refuses to time an engine whose
results fail the checks below.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

Tensor = Any  # a minigrad.Tensor or torch.Tensor: the bodies only use the shared API
Lib = Any  # the module itself: minigrad or torch

RTOL_F64 = 1e-6
"""Element-wise relative tolerance for float64 results (the performance issue's figure)."""
RTOL_F32 = 1e-4
"""Norm-wise relative tolerance for float32 results, compared with a float64 reference: float32
rounding (and the odd ReLU that flips at a pre-activation within rounding of 0) moves single
elements by more than 1e-6, but a wrong backward formula moves the whole array by far more."""

NP_DTYPES: dict[str, type[np.floating]] = {"float64": np.float64, "float32": np.float32}


class CheckFailed(AssertionError):
    """An engine's result disagrees with the hand-written NumPy reference: its timings are void."""


# ----------------------------------------------------------------------------------------------
# Checking
# ----------------------------------------------------------------------------------------------


def to_numpy(t: Tensor | np.ndarray) -> np.ndarray:
    """A float64 copy of a tensor's values, whatever the engine (``detach().numpy()`` is shared API)."""
    if isinstance(t, np.ndarray):
        return t.astype(np.float64)
    return np.array(t.detach().numpy(), dtype=np.float64)


def assert_close(what: str, got: Tensor | np.ndarray, want: np.ndarray, dtype: str = "float64") -> None:
    """Raise CheckFailed unless ``got`` matches ``want``.

    float64: element-wise ``|got - want| <= RTOL_F64 * |want| + atol`` with ``atol`` a billionth of
    ``max|want|``, so that entries that cancel to ~0 are not held to a relative bound they cannot
    meet while any real error (a wrong formula, a missing accumulation) still fails.
    float32: norm-wise, see RTOL_F32.
    """
    g = to_numpy(got) if got is not None else None
    if g is None:
        raise CheckFailed(f"{what}: missing (None), expected an array of shape {np.shape(want)}")
    w = np.asarray(want, dtype=np.float64)
    if g.shape != w.shape:
        raise CheckFailed(f"{what}: shape {g.shape}, expected {w.shape}")
    if not np.all(np.isfinite(g)):
        raise CheckFailed(f"{what}: {int(np.sum(~np.isfinite(g)))} non-finite entries")
    scale = float(np.max(np.abs(w))) if w.size else 0.0
    if dtype == "float32":
        err = float(np.linalg.norm(g - w)) / max(float(np.linalg.norm(w)), 1e-300)
        if err > RTOL_F32:
            raise CheckFailed(f"{what}: norm-wise relative error {err:.3g} > {RTOL_F32:g} (float32)")
        return
    bad = np.abs(g - w) > RTOL_F64 * np.abs(w) + 1e-9 * scale
    if np.any(bad):
        i = np.unravel_index(int(np.argmax(np.abs(g - w) * bad)), w.shape)
        raise CheckFailed(
            f"{what}: {int(bad.sum())}/{w.size} entries off by more than rtol {RTOL_F64:g}; "
            f"worst at {tuple(int(k) for k in i)}: got {g[i]!r}, want {w[i]!r}"
        )


def check_all(got: Mapping[str, Any], want: Mapping[str, np.ndarray], dtype: str = "float64") -> None:
    """Check every named result the reference produced (a name the engine did not produce fails)."""
    for name, w in want.items():
        assert_close(name, got.get(name), w, dtype)


# ----------------------------------------------------------------------------------------------
# Inputs: always made with NumPy from a fixed seed, so every engine sees the same numbers
# ----------------------------------------------------------------------------------------------


def leaf(lib: Lib, a: np.ndarray, requires_grad: bool = True) -> Tensor:
    """A leaf tensor holding a private copy of ``a`` (``from_numpy`` would share the buffer)."""
    t = lib.from_numpy(np.array(a, copy=True))
    return t.requires_grad_() if requires_grad else t


def chain_input(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """W1/W4/W5 input: values in [0.3, 0.9], where the chain's gradient is well conditioned.

    The chain contracts slowly towards 0 (its slope at 0 is exactly 1), so neither the values nor
    the gradient under- or overflow even after a million ops.
    """
    if shape == (1,):
        return np.array([0.7])
    return np.random.default_rng(seed).uniform(0.3, 0.9, size=shape)


def mlp_init(sizes: list[int], dtype: str = "float64", seed: int = 0) -> list[np.ndarray]:
    """[W1, b1, W2, b2, ...] with W of shape (fan_in, fan_out) ~ N(0, 1/fan_in) and small biases."""
    rng = np.random.default_rng(seed)
    params: list[np.ndarray] = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        params.append(rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in))
        params.append(0.1 * rng.standard_normal(fan_out))
    return [p.astype(NP_DTYPES[dtype]) for p in params]


def regression_data(batch: int, n_in: int = 2, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """W2's fixed batch: points in [-2, 2]^2 and a smooth target of shape (batch, 1)."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2.0, 2.0, size=(batch, n_in))
    y = (np.sin(x[:, 0]) * np.cos(x[:, -1]))[:, None]
    return x, y


def classification_data(
    batch: int, n_in: int, n_classes: int, dtype: str = "float64", seed: int = 2
) -> tuple[np.ndarray, np.ndarray]:
    """W3's fixed batch: MNIST-sized inputs in [0, 1) and one-hot labels."""
    rng = np.random.default_rng(seed)
    x = rng.random((batch, n_in))
    onehot = np.eye(n_classes)[rng.integers(0, n_classes, size=batch)]
    return x.astype(NP_DTYPES[dtype]), onehot.astype(NP_DTYPES[dtype])


# ----------------------------------------------------------------------------------------------
# W1 / W4 / W5: a long chain of cheap elementwise ops
# ----------------------------------------------------------------------------------------------

OPS_PER_ITER = 4
"""``(x * 2.0 + 0.0).tanh() * 0.5`` is a mul, an add, a tanh and a mul."""


def chain(x: Tensor, n_iter: int) -> Tensor:
    """W1's body: 4 * n_iter ops whose arithmetic is trivial on small x, so only overhead is left."""
    for _ in range(n_iter):
        x = (x * 2.0 + 0.0).tanh() * 0.5
    return x


def chain_backward(y: Tensor, retain_graph: bool = False) -> None:
    """Backward of ``y.sum()``, the scalar the issue differentiates."""
    y.sum().backward(retain_graph=retain_graph)


def np_chain_forward(a: np.ndarray, n_iter: int, save: bool = True) -> tuple[np.ndarray, list[np.ndarray]]:
    """Hand-written forward: the same 4 NumPy ops per step, keeping only what backward needs (tanh)."""
    saved: list[np.ndarray] = []
    for _ in range(n_iter):
        t = np.tanh(a * 2.0 + 0.0)
        if save:
            saved.append(t)
        a = t * 0.5
    return a, saved


def np_chain_backward(saved: list[np.ndarray], free: bool = True) -> np.ndarray:
    """Hand-written backward of ``sum(chain(x))``, in place so that it is also the memory floor
    (one gradient and one temporary); ``free`` drops each saved tanh once used, as an engine
    without ``retain_graph`` may."""
    g = np.ones_like(saved[-1])
    for i in range(len(saved) - 1, -1, -1):
        d = saved[i] * saved[i]
        np.subtract(1.0, d, out=d)  # tanh' = 1 - t^2
        g *= 0.5  # d(y * 0.5)
        g *= d
        g *= 2.0  # d(+ 0.0) is 1, then d(x * 2.0)
        if free:
            saved[i] = None  # type: ignore[call-overload]
    return g


def chain_reference(a: np.ndarray, n_iter: int) -> dict[str, np.ndarray]:
    """Expected ``y`` and ``x.grad`` of the chain."""
    y, saved = np_chain_forward(a, n_iter)
    return {"y": y, "x.grad": np_chain_backward(saved)}


def chain_dual(lib: Lib, a: np.ndarray, n_iter: int) -> dict[str, Any]:
    """W1's chain under forward AD: ``x`` a dual tensor (tangent 1, not requiring grad); its value and tangent."""
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        x = fw.make_dual(leaf(lib, a, requires_grad=False), leaf(lib, np.ones_like(a), requires_grad=False))
        y, tangent = fw.unpack_dual(chain(x, n_iter))
        return {"y": y, "tangent": tangent}


def np_chain_dual(a: np.ndarray, n_iter: int) -> dict[str, np.ndarray]:
    """Hand-written forward mode of the chain: each step's value and tangent, as dual numbers."""
    t = np.ones_like(a)
    for _ in range(n_iter):
        u = np.tanh(a * 2.0 + 0.0)
        t = (1.0 - u * u) * (t * 2.0) * 0.5
        a = u * 0.5
    return {"y": a, "tangent": t}


def chain_result(x: Tensor, y: Tensor) -> dict[str, Any]:
    """What the checks compare after ``chain`` and ``chain_backward``."""
    return {"y": y, "x.grad": x.grad}


# ----------------------------------------------------------------------------------------------
# W2 / W3: MLP training steps
# ----------------------------------------------------------------------------------------------


def mlp_forward(params: list[Tensor], x: Tensor, act: str) -> Tensor:
    """``x @ W + b`` layers with ``act`` ("tanh" or "relu") between them, none after the last."""
    h = x
    n_layers = len(params) // 2
    for i in range(n_layers):
        h = h @ params[2 * i] + params[2 * i + 1]
        if i < n_layers - 1:
            h = h.tanh() if act == "tanh" else h.relu()
    return h


def mse_loss(out: Tensor, y: Tensor) -> Tensor:
    """W2's loss, written with ``d * d`` so it needs no ``**``."""
    d = out - y
    return (d * d).mean()


def xent_loss(logits: Tensor, onehot: Tensor) -> Tensor:
    """W3's loss: mean cross-entropy, exactly as the issue writes it."""
    return (logits.logsumexp(1) - (logits * onehot).sum(1)).mean()


LOSSES: dict[str, Callable[[Tensor, Tensor], Tensor]] = {"mse": mse_loss, "xent": xent_loss}


def sgd_update(lib: Lib, params: list[Tensor], lr: float) -> None:
    """Plain SGD in place, as the tutorials write it."""
    with lib.no_grad():
        for p in params:
            p -= lr * p.grad
            p.grad = None


def loss_and_grads(params: list[Tensor], x: Tensor, target: Tensor, act: str, loss: str) -> Tensor:
    """Forward and backward of one step; the gradients are left in ``p.grad``."""
    value = LOSSES[loss](mlp_forward(params, x, act), target)
    value.backward()
    return value


def train_step(
    lib: Lib, params: list[Tensor], x: Tensor, target: Tensor, act: str, loss: str, lr: float
) -> Tensor:
    """One timed SGD step: forward, backward, update."""
    value = loss_and_grads(params, x, target, act, loss)
    sgd_update(lib, params, lr)
    return value


def np_mlp_loss_and_grads(
    params: list[np.ndarray], x: np.ndarray, target: np.ndarray, act: str, loss: str
) -> tuple[float, list[np.ndarray]]:
    """Hand-written forward and backward of ``mlp_forward`` + loss."""
    n_layers = len(params) // 2
    hs = [x]  # inputs of every layer
    for i in range(n_layers):
        z = hs[-1] @ params[2 * i] + params[2 * i + 1]
        if i < n_layers - 1:
            z = np.tanh(z) if act == "tanh" else np.maximum(z, 0)
        hs.append(z)
    out = hs.pop()
    if loss == "mse":
        d = out - target
        value = float(np.mean(d * d))
        dz = d * (2.0 / d.size)
    else:
        m = out.max(axis=1, keepdims=True)
        lse = m + np.log(np.exp(out - m).sum(axis=1, keepdims=True))
        value = float(np.mean(lse[:, 0] - (out * target).sum(axis=1)))
        dz = (np.exp(out - lse) - target) * (1.0 / out.shape[0])
    dz = dz.astype(out.dtype, copy=False)
    grads: list[np.ndarray] = [np.empty(0)] * len(params)
    for i in range(n_layers - 1, -1, -1):
        h = hs[i]
        grads[2 * i] = h.T @ dz
        grads[2 * i + 1] = dz.sum(axis=0)
        if i > 0:
            dh = dz @ params[2 * i].T
            dz = dh * (1.0 - h * h) if act == "tanh" else dh * (h > 0)
    return value, grads


def np_train_step(
    params: list[np.ndarray], x: np.ndarray, target: np.ndarray, act: str, loss: str, lr: float
) -> float:
    """One hand-written SGD step, updating ``params`` in place."""
    value, grads = np_mlp_loss_and_grads(params, x, target, act, loss)
    for p, g in zip(params, grads):
        p -= lr * g
    return value


def mlp_reference(
    params: list[np.ndarray], x: np.ndarray, target: np.ndarray, act: str, loss: str, lr: float, steps: int
) -> dict[str, np.ndarray]:
    """Expected first-step loss and gradients, and the loss at the last of ``steps`` SGD steps.

    Computed in float64 whatever the dtype being checked (see RTOL_F32).
    """
    ps = [p.astype(np.float64) for p in params]
    x64, t64 = x.astype(np.float64), target.astype(np.float64)
    first, grads = np_mlp_loss_and_grads(ps, x64, t64, act, loss)
    want: dict[str, np.ndarray] = {"loss[0]": np.array(first)}
    want.update({f"grad[{i}]": g for i, g in enumerate(grads)})
    last = first
    for p, g in zip(ps, grads):
        p -= lr * g
    for _ in range(steps - 1):
        last = np_train_step(ps, x64, t64, act, loss, lr)
    want[f"loss[{steps - 1}]"] = np.array(last)
    return want


def mlp_run_checked(
    lib: Lib, params: list[Tensor], x: Tensor, target: Tensor, act: str, loss: str, lr: float, steps: int
) -> dict[str, Any]:
    """``steps`` training steps of an engine, keeping what ``mlp_reference`` predicts."""
    first = loss_and_grads(params, x, target, act, loss)
    got: dict[str, Any] = {"loss[0]": first}
    got.update({f"grad[{i}]": None if p.grad is None else to_numpy(p.grad) for i, p in enumerate(params)})
    sgd_update(lib, params, lr)
    last = first
    for _ in range(steps - 1):
        last = train_step(lib, params, x, target, act, loss, lr)
    got[f"loss[{steps - 1}]"] = last
    return got


def np_mlp_run_checked(
    params: list[np.ndarray], x: np.ndarray, target: np.ndarray, act: str, loss: str, lr: float, steps: int
) -> dict[str, Any]:
    """The NumPy reference's own run, checked like an engine (its float32 twin is timed too)."""
    first, grads = np_mlp_loss_and_grads(params, x, target, act, loss)
    got: dict[str, Any] = {"loss[0]": np.array(first)}
    got.update({f"grad[{i}]": g for i, g in enumerate(grads)})
    for p, g in zip(params, grads):
        p -= lr * g
    last = first
    for _ in range(steps - 1):
        last = np_train_step(params, x, target, act, loss, lr)
    got[f"loss[{steps - 1}]"] = np.array(last)
    return got


# ----------------------------------------------------------------------------------------------
# W6: second order
# ----------------------------------------------------------------------------------------------


def hessian_diag(lib: Lib, x: Tensor) -> tuple[Tensor, Tensor]:
    """W6's body: d/dx sum(tanh x) with create_graph, then the gradient of its sum (the Hessian's
    diagonal, as tanh acts elementwise)."""
    g = lib.autograd.grad(x.tanh().sum(), x, create_graph=True)[0]
    h = lib.autograd.grad(g.sum(), x)[0]
    return g, h


def np_hessian_diag(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Hand-written: tanh' = 1 - t^2, tanh'' = -2 t (1 - t^2)."""
    t = np.tanh(a)
    g = 1.0 - t * t
    return g, -2.0 * t * g


def hessian_reference(a: np.ndarray) -> dict[str, np.ndarray]:
    g, h = np_hessian_diag(a)
    return {"grad": g, "hessian_diag": h}


def w6_input(n: int, seed: int = 3) -> np.ndarray:
    """Values in [-2, 2], where tanh'' is far from 0 on most entries."""
    return np.random.default_rng(seed).uniform(-2.0, 2.0, size=n)
