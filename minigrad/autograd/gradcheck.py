"""gradcheck / gradgradcheck: compare autograd's Jacobian with finite differences.

The numerical Jacobian uses central differences, perturbing one input element at a time in
place; the analytical one asks autograd for one row per output element. Use float64 inputs:
with float32 the finite differences are too noisy for the default tolerances.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._tensor import Tensor, make
from .gradients import grad as autograd_grad


class GradcheckError(RuntimeError):
    """Raised by gradcheck when the analytical and numerical gradients disagree."""


def _as_tuple(x) -> tuple:

    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _outputs(func, inputs):
    # grad mode stays on: gradgradcheck's function itself calls autograd.grad
    out = _as_tuple(func(*inputs))
    return [o._data.astype(np.float64).copy() for o in out]


def _numerical(func, inputs, diff_idx, eps):
    """jac[i][j]: d output j / d input i, as an (n_in, n_out) array per pair."""
    n_outs = [o.size for o in _outputs(func, inputs)]
    jac = [[np.zeros((inputs[i]._data.size, n)) for n in n_outs] for i in diff_idx]
    for a, i in enumerate(diff_idx):
        data = inputs[i]._data
        flat = data.reshape(-1)  # a view: writing it perturbs the input in place
        for k in range(flat.size):
            orig = flat[k].item()
            flat[k] = orig - eps
            lo = _outputs(func, inputs)
            flat[k] = orig + eps
            hi = _outputs(func, inputs)
            flat[k] = orig
            for j, (h, low) in enumerate(zip(hi, lo)):
                jac[a][j][k] = ((h - low) / (2 * eps)).reshape(-1)
    return jac


def _analytical(func, inputs, diff_idx):

    outs = _as_tuple(func(*inputs))
    diff_inputs = [inputs[i] for i in diff_idx]
    jac = [[np.zeros((inputs[i]._data.size, o._data.size)) for o in outs] for i in diff_idx]
    for j, o in enumerate(outs):
        if not o._requires_grad:
            continue
        for k in range(o._data.size):
            seed = np.zeros(o._data.size, o._data.dtype)
            seed[k] = 1
            grads = autograd_grad(o, diff_inputs, make(seed.reshape(o._data.shape)), retain_graph=True,
                                  allow_unused=True)
            for a, g in enumerate(grads):
                if g is not None:
                    jac[a][j][:, k] = g._data.reshape(-1)
    return jac


def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
              check_grad_dtypes: bool = False, check_batched_grad: bool = False,
              check_batched_forward_grad: bool = False, check_forward_ad: bool = False,
              check_backward_ad: bool = True, fast_mode: bool = False, masked=None) -> bool:
    """True when autograd's gradients of `func` at `inputs` match finite differences."""

    inputs = _as_tuple(inputs)
    diff_idx = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t._requires_grad]
    if not diff_idx:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")
    for i in diff_idx:
        if inputs[i]._data.dtype != np.float64:
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point or complex. "
                          "This check will likely fail if all the inputs are not of double precision floating point "
                          "or complex. ", UserWarning, stacklevel=2)
    numerical = _numerical(func, inputs, diff_idx, eps)
    if check_forward_ad:  # the Jacobian from forward mode, one tangent per input element (PyTorch's order: first)
        mismatch = _mismatch(_forward_jacobian(func, inputs, diff_idx), numerical, diff_idx, rtol, atol)
        if mismatch:
            return _fail(raise_exception, "Jacobian computed with forward mode " + mismatch)
    if not check_backward_ad:
        return True
    analytical = _analytical(func, inputs, diff_idx)
    mismatch = _mismatch(analytical, numerical, diff_idx, rtol, atol)
    if mismatch:
        return _fail(raise_exception, "Jacobian " + mismatch)
    again = _analytical(func, inputs, diff_idx)
    for first, second in zip(analytical, again):
        for an, an2 in zip(first, second):
            if not np.allclose(an, an2, rtol=0, atol=nondet_tol):
                return _fail(raise_exception, "Backward is not reentrant, i.e., running backward with same input and "
                             "grad_output multiple times gives different values, although analytical gradient "
                             "matches numerical gradient.")
    return True


def _mismatch(analytical: list, numerical: list, diff_idx: list, rtol: float, atol: float) -> str:
    for a, i in enumerate(diff_idx):
        for j, (an, nu) in enumerate(zip(analytical[a], numerical[a])):
            if not np.allclose(an, nu, rtol=rtol, atol=atol):
                return (f"mismatch for output {j} with respect to input {i},\n"
                        f"numerical:{_show(nu)}\nanalytical:{_show(an)}\n")
    return ""


def _forward_jacobian(func, inputs, diff_idx):
    """jac[i][j] as `_analytical`'s, column by column from forward AD: input i's tangent is one basis vector."""
    from . import forward_ad  # lazy: forward AD is built on the ops, which load after autograd's package

    n_outs = [o.size for o in _outputs(func, inputs)]
    jac = [[np.zeros((inputs[i]._data.size, n)) for n in n_outs] for i in diff_idx]
    for a, i in enumerate(diff_idx):
        x = inputs[i]
        for k in range(x._data.size):
            basis = np.zeros(x._data.size, x._data.dtype)
            basis[k] = 1
            with forward_ad.dual_level():
                args = list(inputs)
                args[i] = forward_ad.make_dual(x.detach(), make(basis.reshape(x._data.shape)))
                outs = _as_tuple(func(*args))
                for j, o in enumerate(outs):
                    tangent = forward_ad.unpack_dual(o).tangent
                    if tangent is not None:
                        jac[a][j][k] = tangent._data.reshape(-1)
    return jac


def _show(a: np.ndarray) -> str:

    return repr(make(a.astype(np.float64)))


def _fail(raise_exception: bool, msg: str) -> bool:
    if raise_exception:
        raise GradcheckError(msg)
    return False


def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True, nondet_tol: float = 0.0,
                  check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
                  check_batched_grad: bool = False, check_fwd_over_rev: bool = False,
                  check_rev_over_rev: bool = True, fast_mode: bool = False, masked: bool = False) -> bool:
    """gradcheck of the gradient itself: checks second derivatives (create_graph=True)."""

    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        outs = _as_tuple(func(*inputs))
        grad_outputs = tuple(make(rng.standard_normal(o._data.shape).astype(o._data.dtype), None, True)
                             for o in outs if o._requires_grad)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)
    diff_idx = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t._requires_grad]

    def first_derivative(*args):
        ins, gos = args[:n_in], args[n_in:]
        outs = [o for o in _as_tuple(func(*ins)) if o._requires_grad]
        grads = autograd_grad(outs, [ins[i] for i in diff_idx], gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivative, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol)
